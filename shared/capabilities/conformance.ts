/**
 * The conformance pack (`npm start -- --conformance`): deterministic capabilities that let anyone test the engine's
 * semantics from outside, like a test server. Each pack instance keeps its own state (the flaky counters and the
 * ledger); the module-level default pack is the one the local runtime registers and `GET /conformance/ledger` reads.
 */
import type { Capability, CatalogDocument } from '../plan/schema.ts';
import type { CapabilityBinding, CapabilityCall } from '../ports/capabilities.ts';
import { builtinAgent, builtinBinding, builtinTool } from './builtin.ts';
import { capabilityError } from './capability-errors.ts';

export const CONFORMANCE_TARGETS = {
  echo: 'tool:conformance.echo',
  sleep: 'tool:conformance.sleep',
  fail: 'tool:conformance.fail',
  flaky: 'tool:conformance.flaky',
  ledger: 'tool:conformance.ledger',
  spend: 'tool:conformance.spend',
  unledger: 'tool:conformance.unledger',
  scripted: 'agent:conformance.scripted',
  approver: 'human:conformance.approver',
} as const;

/** The longest a conformance sleep may take: long enough to show overlap, short enough for Lambda and tests. */
export const MAX_CONFORMANCE_SLEEP_MS = 60_000;

type Contract = Capability['inputSchema'];

const object = (properties: Record<string, Contract>, required: string[]): Contract => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});

export function conformanceCatalog(): CatalogDocument {
  return {
    capabilities: [
      {
        target: CONFORMANCE_TARGETS.echo,
        description: 'Returns its input value unchanged.',
        sideEffect: 'none',
        inputSchema: object({ value: {} }, ['value']),
        outputSchema: object({ value: {} }, ['value']),
      },
      {
        target: CONFORMANCE_TARGETS.sleep,
        description: 'Waits the given number of milliseconds, then reports how long it slept.',
        sideEffect: 'none',
        inputSchema: object({ ms: { type: 'integer', minimum: 0, maximum: MAX_CONFORMANCE_SLEEP_MS } }, ['ms']),
        outputSchema: object({ sleptMs: { type: 'integer', minimum: 0 } }, ['sleptMs']),
      },
      {
        target: CONFORMANCE_TARGETS.fail,
        description: 'Always fails with the given message; retryable or permanent as asked.',
        sideEffect: 'none',
        inputSchema: object({ message: { type: 'string' }, retryable: { type: 'boolean' } }, ['message', 'retryable']),
        outputSchema: object({}, []),
      },
      {
        target: CONFORMANCE_TARGETS.flaky,
        description: 'Fails (retryably) the first `failures` calls for a key, then succeeds with the number of calls.',
        sideEffect: 'none',
        inputSchema: object({ key: { type: 'string', minLength: 1 }, failures: { type: 'integer', minimum: 0 } }, [
          'key',
          'failures',
        ]),
        outputSchema: object({ attempts: { type: 'integer', minimum: 1 } }, ['attempts']),
      },
      {
        target: CONFORMANCE_TARGETS.ledger,
        description:
          'Appends an entry to the conformance ledger (a side effect made visible by GET /conformance/ledger).',
        sideEffect: 'mutating',
        inputSchema: object({ entry: {} }, ['entry']),
        outputSchema: object({ entryId: { type: 'string' } }, ['entryId']),
        // Its compensation (saga segments): the entry this step appended is reversed by a new entry.
        compensate: { target: CONFORMANCE_TARGETS.unledger, input: { entryId: '{% $output.entryId %}' } },
      },
      {
        target: CONFORMANCE_TARGETS.unledger,
        description:
          'Reverses a ledger entry: appends an entry `{ "reverses": "<entryId>" }` (the compensation of the ledger).',
        sideEffect: 'mutating',
        inputSchema: object({ entryId: { type: 'string', minLength: 1 } }, ['entryId']),
        outputSchema: object({ entryId: { type: 'string' } }, ['entryId']),
      },
      {
        target: CONFORMANCE_TARGETS.spend,
        description: 'Reports exactly the given usage (tokens, US dollars) and returns {}: budgets made visible.',
        sideEffect: 'none',
        inputSchema: object({ tokens: { type: 'integer', minimum: 0 }, costUsd: { type: 'number', minimum: 0 } }, [
          'tokens',
          'costUsd',
        ]),
        outputSchema: object({}, []),
      },
      {
        target: CONFORMANCE_TARGETS.scripted,
        description: 'An agent that answers with the output and confidence it is given (any JSON object).',
        sideEffect: 'none',
        // `output` is any JSON on input so a plan can script a contract violation; the outputSchema still requires
        // an object, which is what the executor checks.
        inputSchema: object({ output: {}, confidence: { type: 'number', minimum: 0, maximum: 1 } }, [
          'output',
          'confidence',
        ]),
        outputSchema: { type: 'object' },
      },
      {
        target: CONFORMANCE_TARGETS.approver,
        description: 'A person approves or rejects (a gate); the note says what to look at.',
        sideEffect: 'none',
        inputSchema: object({ note: { type: 'string' } }, []),
        outputSchema: object({ approved: { type: 'boolean' }, comment: { type: 'string' } }, ['approved']),
      },
    ],
  };
}

export interface LedgerEntry {
  readonly entryId: string;
  readonly entry: unknown;
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly idempotencyKey: string;
  readonly at: string;
}

/**
 * Where a ledger keeps its entries beyond the process (the embedded stack's data directory). `append` must be durable
 * when it returns: the ledger stands in for an outside system, whose side effect happened once it answered.
 */
export interface LedgerJournal {
  load(): LedgerEntry[];
  append(entry: LedgerEntry): void;
}

export interface Ledger {
  entries(): LedgerEntry[];
  append(entry: unknown, call: CapabilityCall): LedgerEntry;
  clear(): void;
  /** Takes the journal's entries and writes every later one to it first; undefined detaches it. */
  keepIn(journal: LedgerJournal | undefined): void;
}

function createLedger(clock: () => Date): Ledger {
  const entries: LedgerEntry[] = [];
  let journal: LedgerJournal | undefined;
  return {
    entries: () => entries.map((e) => ({ ...e })),
    append(entry, call) {
      const written: LedgerEntry = {
        entryId: `ledger-${String(entries.length + 1).padStart(6, '0')}`,
        entry,
        runId: call.runId,
        stepId: call.stepId,
        generation: call.generation,
        attempt: call.attempt,
        idempotencyKey: call.idempotencyKey,
        at: clock().toISOString(),
      };
      // Written where it lasts before the capability answers: a crash after this line still shows the entry.
      journal?.append(written);
      entries.push(written);
      return written;
    },
    clear: () => {
      entries.length = 0;
    },
    keepIn(next) {
      journal = next;
      if (next) entries.splice(0, entries.length, ...next.load());
    },
  };
}

export interface ConformancePack {
  readonly catalog: CatalogDocument;
  readonly bindings: Record<string, CapabilityBinding>;
  readonly ledger: Ledger;
  /** Calls seen per flaky key. */
  flakyCalls(key: string): number;
  /** Forgets the ledger and the flaky counters. */
  reset(): void;
}

const field = (input: unknown, name: string): unknown =>
  typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;

export function createConformancePack(options: { clock?: () => Date } = {}): ConformancePack {
  const clock = options.clock ?? (() => new Date());
  const ledger = createLedger(clock);
  const flaky = new Map<string, number>();
  const bindings: Record<string, CapabilityBinding> = {
    [CONFORMANCE_TARGETS.echo]: builtinTool('conformance.echo', async (input) => ({ value: field(input, 'value') })),
    [CONFORMANCE_TARGETS.sleep]: builtinTool('conformance.sleep', async (input, call) => {
      const ms = Math.min(Math.max(Number(field(input, 'ms')) || 0, 0), MAX_CONFORMANCE_SLEEP_MS);
      const started = performance.now();
      // Stops early when the executor gives up on it (a step out of time), so no timer outlives its step.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        call.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return { sleptMs: Math.max(ms, Math.round(performance.now() - started)) };
    }),
    [CONFORMANCE_TARGETS.fail]: builtinTool('conformance.fail', async (input) => {
      const message = String(field(input, 'message') ?? 'conformance failure');
      throw capabilityError('E_CONFORMANCE_FAIL', message, { retryable: field(input, 'retryable') === true });
    }),
    [CONFORMANCE_TARGETS.flaky]: builtinTool('conformance.flaky', async (input) => {
      const key = String(field(input, 'key'));
      const failures = Number(field(input, 'failures')) || 0;
      const calls = (flaky.get(key) ?? 0) + 1;
      flaky.set(key, calls);
      if (calls <= failures)
        throw capabilityError('E_CONFORMANCE_FLAKY', `flaky ${key}: call ${calls} fails (${failures} to fail)`, {
          retryable: true,
        });
      return { attempts: calls };
    }),
    [CONFORMANCE_TARGETS.ledger]: builtinTool('conformance.ledger', async (input, call) => ({
      entryId: ledger.append(field(input, 'entry'), call).entryId,
    })),
    [CONFORMANCE_TARGETS.spend]: builtinBinding('conformance.spend', async ({ input }) => ({
      output: {},
      usage: {
        inputTokens: Number(field(input, 'tokens')) || 0,
        outputTokens: 0,
        costUsd: Number(field(input, 'costUsd')) || 0,
      },
    })),
    [CONFORMANCE_TARGETS.unledger]: builtinTool('conformance.unledger', async (input, call) => ({
      entryId: ledger.append({ reverses: String(field(input, 'entryId')) }, call).entryId,
    })),
    [CONFORMANCE_TARGETS.scripted]: builtinAgent('conformance.scripted', async (input) => ({
      output: field(input, 'output'),
      confidence: Number(field(input, 'confidence')),
    })),
  };
  return {
    catalog: conformanceCatalog(),
    bindings,
    ledger,
    flakyCalls: (key) => flaky.get(key) ?? 0,
    reset: () => {
      ledger.clear();
      flaky.clear();
    },
  };
}

/** The default pack: what `--conformance` registers and `GET /conformance/ledger` lists. */
const defaultPack = createConformancePack();

export const ledger: Ledger = defaultPack.ledger;
export const ledgerEntries = (): LedgerEntry[] => defaultPack.ledger.entries();
export const conformanceBindings = (): Record<string, CapabilityBinding> => ({ ...defaultPack.bindings });
export const resetConformance = (): void => defaultPack.reset();
