/**
 * RunStep (shared/services/step/run-step.ts) on the real DynamoDB store (dynalite), driven as the step machine drives
 * it: the first call with `previous: null`, a retry with RunStep's own retry answer, a repeated call (a retried Task)
 * with the same payload. Capabilities are scripted bindings; Executions and the event bus are recording fakes.
 * `useRunStepStore()` gives a test file its table and the helpers that act on it.
 */
import { afterAll, beforeAll } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import {
  CONFORMANCE_TARGETS,
  conformanceCatalog,
  createConformancePack,
} from '../../shared/capabilities/conformance.ts';
import { createCapabilityRegistry } from '../../shared/capabilities/registry.ts';
import { loadCatalog } from '../../shared/plan/catalog.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';
import type { DomainEvent, EventPublisher } from '../../shared/ports/events.ts';
import {
  type Executions,
  type MachineName,
  type StartResult,
  stepExecutionName,
} from '../../shared/ports/executions.ts';
import type { RunRecord, StepRecord, Store } from '../../shared/ports/store.ts';
import type { RunStepRequest, StepNext } from '../../shared/services/coordinator-types.ts';
import { createOutboxRelay } from '../../shared/services/outbox/relay.ts';
import type { CapabilityCallConfig } from '../../shared/services/step/capability-call.ts';
import { createStepRunner } from '../../shared/services/step/run-step.ts';
import { type Deciding, decidingFor } from './deciding.ts';
import { startDynalite, type TestDynamo } from './dynalite.ts';
import { at, uniqueId } from './store-fixtures.ts';

/** A mutating capability the conformance pack does not have. */
export const CHARGE = 'tool:test.charge';
/** An idempotent capability with a large answer. */
export const BULK = 'tool:test.bulk';
const doc = conformanceCatalog();
doc.capabilities.push(
  {
    target: CHARGE,
    description: 'Charges an amount (a side effect).',
    sideEffect: 'mutating',
    inputSchema: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } },
    outputSchema: { type: 'object', required: ['chargeId'], properties: { chargeId: { type: 'string' } } },
  },
  {
    target: BULK,
    description: 'Exports a lot of data (a side effect with a large answer).',
    sideEffect: 'idempotent',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
  },
);
const catalog = loadCatalog(doc);
export const OBJECTIVE = 'Pay the invoices';

/** Records what the step services ask of Step Functions; runs nothing. */
export class RecordingExecutions implements Executions {
  readonly starts: { machine: MachineName; name: string; input: Readonly<Record<string, unknown>> }[] = [];
  readonly answered: { taskToken: string; output: unknown }[] = [];
  readonly stopped: string[] = [];
  async start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult> {
    const executionId = `arn:test:execution:${machine}:${name}`;
    const started = !this.starts.some((s) => s.machine === machine && s.name === name);
    this.starts.push({ machine, name, input });
    return { executionId, started };
  }
  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    this.answered.push({ taskToken, output });
  }
  async sendTaskFailure(taskToken: string, error: string): Promise<void> {
    this.answered.push({ taskToken, output: { error } });
  }
  async stop(executionId: string): Promise<void> {
    this.stopped.push(executionId);
  }

  async stopNamed(_machine: string, name: string): Promise<void> {
    this.stopped.push(name);
  }
}

class RecordingPublisher implements EventPublisher {
  readonly events: DomainEvent[] = [];
  async publish(events: readonly DomainEvent[]): Promise<void> {
    this.events.push(...events);
  }
}

/** The execution's write of a success on its step (its output; for a first attempt, the attempt's record too). */
export const successWrite = (_runId: string, _stepId: string, _condition: unknown, patch: { output?: unknown }) =>
  patch.output !== undefined;

export const step = (id: string, target: string, input: unknown, dependsOn: string[] = []): PlanStep => ({
  id,
  title: `Step ${id}`,
  target,
  dependsOn,
  input: input as PlanStep['input'],
});

/** The execution that holds a step's generation 1, as the decider names it (the step's `claimedBy`). */
export const claimOf = (runId: string, stepId: string) => stepExecutionName(runId, stepId, 1);

/** The step execution's id, as Step Functions would give it to RunStep. */
export const executionOf = (runId: string, stepId: string) =>
  `arn:test:execution:step:${stepExecutionName(runId, stepId, 1)}`;

/** RunStep's payload on the step machine's first entry. */
export const firstCall = (runId: string, stepId: string): RunStepRequest => ({
  runId,
  stepId,
  generation: 1,
  executionId: executionOf(runId, stepId),
  previous: null,
  decision: null,
});

/** RunStep's payload after Backoff: its own retry answer as `previous`. */
export const afterBackoff = (runId: string, stepId: string, previous: StepNext): RunStepRequest => ({
  ...firstCall(runId, stepId),
  previous,
});

export function counting(binding: CapabilityBinding): CapabilityBinding & { calls: number } {
  const counted = {
    kind: binding.kind,
    calls: 0,
    invoke: (call: Parameters<CapabilityBinding['invoke']>[0]) => {
      counted.calls++;
      return binding.invoke(call);
    },
  };
  return counted;
}

/** A binding that answers after `ms`: long enough for a duplicate to arrive while it is being called. */
export const slow = (binding: CapabilityBinding, ms: number): CapabilityBinding => ({
  kind: binding.kind,
  invoke: async (call) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return binding.invoke(call);
  },
});

export const echoOf = (pack = createConformancePack()) =>
  counting(pack.bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);

export const DONE_1: StepNext = { action: 'done', attempt: 1 };

/** A ready step as the decider's StepStarted leaves it: running, its first attempt, held by its execution. */
export const startedByDecider = (step: StepRecord): StepRecord => ({
  ...step,
  status: 'running',
  attempts: Math.max(1, step.attempts),
  claimedBy: step.claimedBy ?? stepExecutionName(step.runId, step.stepId, step.generation),
  startedAt: step.startedAt ?? step.updatedAt,
});

/**
 * A dynalite table for the calling test file (its beforeAll and afterAll), and the helpers that act on it. `store`
 * stands for the table's store inside the tests.
 */
export function useRunStepStore() {
  let dynamo: TestDynamo | undefined;
  let started: Store | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
    started = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  });
  const decided: Deciding[] = [];
  afterAll(async () => {
    for (const deciding of decided.splice(0)) deciding.close();
    await dynamo?.stop();
  });
  const table = (): TestDynamo => {
    if (!dynamo) throw new Error('useRunStepStore: the table is used inside tests, once beforeAll ran');
    return dynamo;
  };
  const store = new Proxy({} as Store, {
    get(_, key) {
      if (key === 'then') return undefined;
      if (!started) throw new Error(`useRunStepStore: store.${String(key)} is used inside tests, once beforeAll ran`);
      const value = Reflect.get(started, key) as unknown;
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });

  /**
   * A RunStep with its own recording fakes; `over` replaces store methods (to crash one write, say), `stepOver` only
   * those RunStep calls (to count what the step's path reads, apart from the decider).
   */
  function runner(
    bindings: Record<string, CapabilityBinding>,
    options: { capabilityCall?: CapabilityCallConfig; over?: Partial<Store>; stepOver?: Partial<Store> } = {},
  ) {
    const executions = new RecordingExecutions();
    const events = new RecordingPublisher();
    // The runner's writes announce their events through the outbox: this store's change stream goes to a relay that
    // publishes into the recorder (its audit-log writes too, so nothing is stubbed on the way).
    let relay: ReturnType<typeof createOutboxRelay> | undefined;
    const streamed = createDynamoStore({
      client: table().client,
      tableName: table().tableName,
      stream: (record) => void relay?.relay([record]),
    });
    relay = createOutboxRelay({ events, store: streamed });
    const store = { ...streamed, ...options.over };
    // The step's reports go to the run's decider, which commits on this table and starts what follows.
    const runLog = createDynamoRunLogOf(
      { client: table().client, tableName: table().tableName, stream: (record) => void relay?.relay([record]) },
      store,
    );
    // The decider keeps traces as the runner's config says (every entry), so a test reads the whole story.
    const deciding = decidingFor({ store, runLog, executions, catalog, settings: { traceRetention: 'full' } });
    decided.push(deciding);
    let ids = 0;
    const stepRunner = createStepRunner({
      store: { ...store, ...options.stepOver },
      mailbox: deciding.mailbox,
      executions,
      catalog,
      clock: () => new Date(),
      newId: () => `id-${++ids}`,
      config: {
        runDeadlineSeconds: 3600,
        retryBaseSeconds: 1,
        retryCapSeconds: 60,
        maxSteps: 100,
        maxDepth: 10,
        traceRetention: 'full',
      },
      registry: createCapabilityRegistry(bindings),
      ...(options.capabilityCall === undefined ? {} : { capabilityCall: options.capabilityCall }),
    });
    return {
      runStep: async (request: RunStepRequest) => {
        const next = await stepRunner.runStep(request);
        await deciding.mailbox.idle();
        return next;
      },
      executions,
      events,
      deciding,
    };
  }

  /** A store method that throws the first time `when` holds for its arguments (a Lambda dying mid-invocation). */
  function crashOnce<K extends keyof Store>(
    method: K,
    when: (...args: Parameters<Store[K]>) => boolean = () => true,
  ): Partial<Store> {
    let crashed = false;
    const original = store[method] as (...args: Parameters<Store[K]>) => ReturnType<Store[K]>;
    const wrapped = (...args: Parameters<Store[K]>) => {
      if (!crashed && when(...args)) {
        crashed = true;
        throw new Error(`Lambda died in ${String(method)}`);
      }
      return original(...args);
    };
    return { [method]: wrapped } as Partial<Store>;
  }

  /** A store method that, the first time `when` holds, does its write and then throws (the Lambda dies right after). */
  function crashAfter<K extends keyof Store>(
    method: K,
    when: (...args: Parameters<Store[K]>) => boolean = () => true,
  ): Partial<Store> {
    let crashed = false;
    const original = store[method] as (...args: Parameters<Store[K]>) => ReturnType<Store[K]>;
    const wrapped = async (...args: Parameters<Store[K]>) => {
      const result = await original(...args);
      if (!crashed && when(...args)) {
        crashed = true;
        throw new Error(`Lambda died after ${String(method)}`);
      }
      return result;
    };
    return { [method]: wrapped } as Partial<Store>;
  }

  /**
   * A running run with one plan revision and a record per step: steps without dependencies are ready, the others
   * pending; `records` overrides fields (an upstream step already succeeded, a step another execution claimed).
   */
  async function seedRun(
    steps: PlanStep[],
    records: Partial<Record<string, Partial<StepRecord>>> = {},
    run: Partial<RunRecord> = {},
  ) {
    const runId = run.runId ?? uniqueId('run');
    await store.createRun({
      runId,
      status: 'running',
      objective: OBJECTIVE,
      revision: 1,
      createdAt: at(0),
      updatedAt: at(0),
      replans: 0,
      ...run,
    });
    await store.putPlanRevision(runId, { schemaVersion: 1, revision: 1, objective: OBJECTIVE, steps }, 'initial');
    await store.putSteps(
      steps.map((s) => {
        const own = records[s.id] ?? {};
        const done = own.status === 'succeeded';
        const seeded = {
          runId,
          stepId: s.id,
          status: s.dependsOn.length === 0 ? 'ready' : 'pending',
          generation: 1,
          upstream: s.dependsOn,
          remaining: s.dependsOn.length,
          released: [],
          attempts: done ? 1 : 0,
          trace: [],
          updatedAt: at(0),
          ...own,
        } satisfies StepRecord;
        // A step nothing holds back is started by the run's decider at once: running, held by its execution.
        return seeded.status === 'ready' ? startedByDecider(seeded) : seeded;
      }),
    );
    return runId;
  }

  const attemptsOf = (runId: string, stepId: string) => store.listAttempts(runId, stepId);
  const stepOf = async (runId: string, stepId: string): Promise<StepRecord> => {
    const record = await store.getStep(runId, stepId);
    if (!record) throw new Error(`no step ${stepId} in ${runId}`);
    return record;
  };

  return { store, runner, crashOnce, crashAfter, seedRun, attemptsOf, stepOf };
}
