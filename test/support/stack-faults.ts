/**
 * Faults for the embedded stack, armed by a test on the calls it chooses, so that what follows is decided by the
 * state machines' own Retry and Catch and by the engine's idempotency, as it would be on AWS:
 * - the store (`startLocalStack({ wrapStore })`): calls counted per method and per run; an error thrown before a
 *   call (a throttle: nothing was written) or after it (a crash or a lost answer: the write happened, the caller
 *   never heard), a call held until the test lets it go, several calls held until all arrived (a race on a
 *   conditional write). A test scopes its faults to its own run with `runIdFor` (the run id of its objective);
 * - the Lambda handlers (`startLocalStack({ wrapHandler })`): an invocation whose answer is lost after the function
 *   did its work, an invocation held until the test lets it go (a late delivery).
 * Faults fire on the calls they match, once unless told otherwise.
 */
import type { LocalHandler } from '../../infra/local/local-executions.ts';
import { CairnError } from '../../shared/errors.ts';
import type { RunRecord, Store, TerminalRecord } from '../../shared/ports/store.ts';
import { type LocalStack, type LocalStackOptions, useTestStack } from './local-stack.ts';

export type StoreMethod = keyof Store;

/** The run a store call is about: its first argument (a run id), or the `runId` of a record or of a list's first. */
export function runIdOf(args: readonly unknown[]): string | undefined {
  const [first] = args;
  if (typeof first === 'string') return first;
  const record = Array.isArray(first) ? first[0] : first;
  if (typeof record === 'object' && record !== null && 'runId' in record) {
    const runId = (record as { runId: unknown }).runId;
    return typeof runId === 'string' ? runId : undefined;
  }
  return undefined;
}

export interface Call {
  readonly method: StoreMethod;
  readonly args: readonly unknown[];
  readonly runId: string | undefined;
}

/** Which calls a fault applies to: a method, and a test on the call (and, for `after` faults, on what it returned). */
export interface CallMatch {
  readonly method: StoreMethod | readonly StoreMethod[];
  readonly match?: (call: Call, result?: unknown) => boolean;
}

export interface ThrowFault extends CallMatch {
  /** `before`: the call never reaches the store. `after`: it did its work, then the error replaces its answer. */
  readonly when: 'before' | 'after';
  /** The error's name: Step Functions' Retry and Catch match on it (default `ThrottlingException`, `InjectedCrash`). */
  readonly name?: string;
  /**
   * The process dies at the call (a crash, its time running out): nothing in it tries again, where a throttle is
   * tried again in place by the work that asked (a cancel, an invalidation). The error is not retryable.
   */
  readonly crash?: boolean;
  /** How many matching calls fail (default 1). */
  readonly times?: number;
  /** The error is thrown once this has settled (what else the test wants landed first); at once when absent. */
  readonly until?: Promise<unknown>;
}

export interface Armed {
  /** Resolves once the fault has fired as often as it was armed for. */
  readonly fired: Promise<void>;
  /** How often it fired so far. */
  count(): number;
}

export interface Hold {
  /** Resolves when the first matching call is being held. */
  readonly arrived: Promise<void>;
  release(): void;
}

interface Rule {
  readonly match: CallMatch;
  readonly when: 'before' | 'after';
  remaining: number;
  fired: number;
  readonly done: () => void;
  readonly act: (call: Call) => Promise<void>;
}

export interface StoreFaults {
  /** Pass as `wrapStore`. */
  readonly wrap: (store: Store) => Store;
  /** The store without the wrapper (reads a test makes, which must not count or trip a fault). */
  readonly raw: () => Store;
  /** The run id of the run created with this objective (faults and counts are scoped by run). */
  runIdFor(objective: string): string | undefined;
  /** Calls so far of `method` about `runId` (every run when absent). */
  calls(method: StoreMethod, runId?: string): number;
  throwOn(fault: ThrowFault): Armed;
  /** Holds the first matching call (before it reaches the store) until `release`. */
  hold(match: CallMatch): Hold;
  /** Holds the first `parties` matching calls until all of them arrived, then lets them go at once. */
  together(match: CallMatch, parties: number): Armed;
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

export function createStoreFaults(): StoreFaults {
  let inner: Store | undefined;
  const counts = new Map<string, number>();
  const runs = new Map<string, string>();
  const rules: Rule[] = [];

  const arm = (match: CallMatch, when: 'before' | 'after', times: number, act: Rule['act']): Armed => {
    const done = deferred();
    const rule: Rule = { match, when, remaining: times, fired: 0, done: done.resolve, act };
    rules.push(rule);
    return { fired: done.promise, count: () => rule.fired };
  };

  const take = (call: Call, when: 'before' | 'after', result?: unknown): Rule | undefined => {
    const rule = rules.find(
      (r) =>
        r.remaining > 0 &&
        r.when === when &&
        ([] as StoreMethod[]).concat(r.match.method).includes(call.method) &&
        (r.match.match === undefined || r.match.match(call, result)),
    );
    if (!rule) return undefined;
    rule.remaining -= 1;
    rule.fired += 1;
    if (rule.remaining === 0) {
      rules.splice(rules.indexOf(rule), 1);
      rule.done();
    }
    return rule;
  };

  const run = async (call: Call, real: () => Promise<unknown>): Promise<unknown> => {
    await take(call, 'before')?.act(call);
    const result = await real();
    await take(call, 'after', result)?.act(call);
    return result;
  };

  const wrap = (store: Store): Store => {
    inner = store;
    return new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        const method = property as StoreMethod;
        return (...args: unknown[]) => {
          const call: Call = { method, args, runId: runIdOf(args) };
          if (method === 'createRun') {
            const record = args[0] as { runId: string; objective: string };
            runs.set(record.objective, record.runId);
          }
          for (const key of [method, `${method}#${call.runId}`]) counts.set(key, (counts.get(key) ?? 0) + 1);
          return run(call, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        };
      },
    });
  };

  return {
    wrap,
    raw: () => {
      if (!inner) throw new Error('the store faults wrap no store yet');
      return inner;
    },
    runIdFor: (objective) => runs.get(objective),
    calls: (method, runId) => counts.get(runId === undefined ? method : `${method}#${runId}`) ?? 0,
    throwOn(fault) {
      const name = fault.name ?? (fault.crash === true ? 'InjectedCrash' : 'ThrottlingException');
      return arm(fault, fault.when, fault.times ?? 1, async (call) => {
        await fault.until?.catch(() => undefined);
        const message = `injected ${name} ${fault.when} ${call.method}`;
        if (fault.crash === true) throw new CairnError(name, message, { retryable: false });
        const error = new Error(message);
        error.name = name;
        throw error;
      });
    },
    hold(match) {
      const arrived = deferred();
      const released = deferred();
      arm(match, 'before', 1, async () => {
        arrived.resolve();
        await released.promise;
      });
      return { arrived: arrived.promise, release: released.resolve };
    },
    together(match, parties) {
      const all = deferred();
      let arrived = 0;
      return arm(match, 'before', parties, async () => {
        arrived += 1;
        if (arrived >= parties) all.resolve();
        await all.promise;
      });
    },
  };
}

// Lambda invocations

/** A Lambda payload as the state machine sent it. */
export type Payload = Readonly<Record<string, unknown>>;

export interface InvocationMatch {
  /** The function key (`Coordinator`, `StepExecutor`, ...). */
  readonly key: string;
  readonly match: (payload: Payload) => boolean;
}

export interface HandlerFaults {
  /** Pass as `wrapHandler`. */
  readonly wrap: (key: string, handler: LocalHandler) => LocalHandler;
  /**
   * The first matching invocation runs, then fails with `name` (default `Lambda.ServiceException`, which Step
   * Functions retries): the work is done, the answer is lost. Resolves with the answer that was lost.
   */
  loseAnswer(match: InvocationMatch, name?: string): Promise<unknown>;
  /** Holds the first matching invocation before it runs; `arrived` resolves when it is held. */
  hold(match: InvocationMatch): { arrived: Promise<void>; release: () => void };
  /**
   * The first `times` matching invocations fail before they run, with `name` (default `ThrottlingException`): nothing
   * ran. The bus's deliveries to the replanner (key `Replanner`) are invocations too.
   */
  fail(match: InvocationMatch, times: number, name?: string): Armed;
  /** Invocations so far of a function, with their payloads. */
  invocations(key: string): Payload[];
}

interface InvocationRule extends InvocationMatch {
  readonly around: (run: () => Promise<unknown>) => Promise<unknown>;
}

export function createHandlerFaults(): HandlerFaults {
  const rules: InvocationRule[] = [];
  const seen: { key: string; payload: Payload }[] = [];

  const take = (key: string, payload: Payload): InvocationRule | undefined => {
    const rule = rules.find((r) => r.key === key && r.match(payload));
    if (rule) rules.splice(rules.indexOf(rule), 1);
    return rule;
  };

  return {
    wrap: (key, handler) => async (payload) => {
      const fields = (typeof payload === 'object' && payload !== null ? payload : {}) as Payload;
      seen.push({ key, payload: fields });
      const rule = take(key, fields);
      return rule ? rule.around(() => handler(payload)) : handler(payload);
    },
    loseAnswer(match, name = 'Lambda.ServiceException') {
      return new Promise((resolve) => {
        rules.push({
          ...match,
          around: async (run) => {
            const answer = await run();
            resolve(answer);
            const error = new Error(`injected: the answer of ${match.key} was lost`);
            error.name = name;
            throw error;
          },
        });
      });
    },
    hold(match) {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      rules.push({
        ...match,
        around: async (run) => {
          arrive();
          await released;
          return run();
        },
      });
      return { arrived, release };
    },
    fail(match, times, name = 'ThrottlingException') {
      const done = deferred();
      let fired = 0;
      const failOnce = (): void => {
        rules.push({
          ...match,
          around: async () => {
            fired += 1;
            if (fired < times) failOnce();
            else done.resolve();
            const error = new Error(`injected: an invocation of ${match.key} failed before it ran`);
            error.name = name;
            throw error;
          },
        });
      };
      if (times > 0) failOnce();
      else done.resolve();
      return { fired: done.promise, count: () => fired };
    },
    invocations: (key) => seen.filter((s) => s.key === key).map((s) => s.payload),
  };
}

/** The calling test file's stack (as `useTestStack` gives it) with store and handler faults a test arms. */
export interface StackWithFaults {
  readonly stack: LocalStack;
  readonly faults: StoreFaults;
  readonly handlers: HandlerFaults;
}

/**
 * A test stack whose store and Lambda handlers go through faults, with retries without their interval (a fault's
 * repeat comes at once). `options` add to (or override) these, a `wrapHandler` of the file's own among them.
 */
export function useStackWithFaults(options: LocalStackOptions = {}): StackWithFaults {
  const faults = createStoreFaults();
  const handlers = createHandlerFaults();
  // A test's own handler wrapper runs inside the faults', so both apply.
  const own = options.wrapHandler;
  const wrapHandler: NonNullable<LocalStackOptions['wrapHandler']> =
    own === undefined ? handlers.wrap : (key, handler) => handlers.wrap(key, own(key, handler));
  const stack = useTestStack({ retryIntervalMs: 5, wrapStore: faults.wrap, ...options, wrapHandler });
  return { stack, faults, handlers };
}

/**
 * The run's end (an `updateRun` of the objective's run whose terminal record has these fields) is written, then its
 * answer is lost: the caller hears a TimeoutError and repeats the call.
 */
export const loseRunEndAnswer = (
  faults: StoreFaults,
  objective: string,
  terminal: Partial<Pick<TerminalRecord, 'state' | 'reason'>>,
): Armed =>
  faults.throwOn({
    method: 'updateRun',
    when: 'after',
    name: 'TimeoutError',
    match: (call) => {
      const written = (call.args[2] as Partial<RunRecord>).terminal;
      return (
        call.runId === faults.runIdFor(objective) &&
        written !== undefined &&
        (terminal.state === undefined || written.state === terminal.state) &&
        (terminal.reason === undefined || written.reason === terminal.reason)
      );
    },
  });
