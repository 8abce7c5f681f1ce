/**
 * RunStep (shared/services/step/run-step.ts) on the real DynamoDB store (dynalite), driven as the step machine drives
 * it: the first call with `previous: null`, a retry with RunStep's own retry answer, a repeated call (a retried Task)
 * with the same payload. Capabilities are scripted bindings; Executions and the event bus are recording fakes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { builtinTool } from '../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../shared/capabilities/capability-errors.ts';
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
  stepExecutionInput,
  stepExecutionName,
} from '../../shared/ports/executions.ts';
import type { RunRecord, StepRecord, Store } from '../../shared/ports/store.ts';
import type { RunStepRequest, StepNext } from '../../shared/services/coordinator-types.ts';
import { createOutboxRelay } from '../../shared/services/outbox/relay.ts';
import type { CapabilityCallConfig } from '../../shared/services/step/capability-call.ts';
import { createStepRunner } from '../../shared/services/step/run-step.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
import { at, uniqueId } from '../support/store-fixtures.ts';

const CHARGE = 'tool:test.charge';
const BULK = 'tool:test.bulk';
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
const OBJECTIVE = 'Pay the invoices';

let dynamo: TestDynamo;
let store: Store;
beforeAll(async () => {
  dynamo = await startDynalite();
  store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
});
afterAll(async () => {
  await dynamo.stop();
});

/** Records what the step services ask of Step Functions; runs nothing. */
class RecordingExecutions implements Executions {
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
}

class RecordingPublisher implements EventPublisher {
  readonly events: DomainEvent[] = [];
  async publish(events: readonly DomainEvent[]): Promise<void> {
    this.events.push(...events);
  }
}

/** A RunStep with its own recording fakes; `over` replaces store methods (to crash one write, say). */
function runner(
  bindings: Record<string, CapabilityBinding>,
  options: { capabilityCall?: CapabilityCallConfig; over?: Partial<Store> } = {},
) {
  const executions = new RecordingExecutions();
  const events = new RecordingPublisher();
  // The runner's writes announce their events through the outbox: this store's change stream goes to a relay that
  // publishes into the recorder (its audit-log writes too, so nothing is stubbed on the way).
  let relay: ReturnType<typeof createOutboxRelay> | undefined;
  const streamed = createDynamoStore({
    client: dynamo.client,
    tableName: dynamo.tableName,
    stream: (record) => void relay?.relay([record]),
  });
  relay = createOutboxRelay({ events, store: streamed });
  let ids = 0;
  const stepRunner = createStepRunner({
    store: { ...streamed, ...options.over },
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
  return { runStep: (request: RunStepRequest) => stepRunner.runStep(request), executions, events };
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

/** The step's success write: for a first attempt, the write that records the attempt too. */
const successWrite = (_runId: string, _stepId: string, _condition: unknown, patch: { status?: string }) =>
  patch.status === 'succeeded';

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
      return {
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
    }),
  );
  return runId;
}

const step = (id: string, target: string, input: unknown, dependsOn: string[] = []): PlanStep => ({
  id,
  title: `Step ${id}`,
  target,
  dependsOn,
  input: input as PlanStep['input'],
});

/** The step execution's id, as Step Functions would give it to RunStep. */
const executionOf = (runId: string, stepId: string) => `arn:test:execution:step:${stepExecutionName(runId, stepId, 1)}`;

/** RunStep's payload on the step machine's first entry. */
const firstCall = (runId: string, stepId: string): RunStepRequest => ({
  runId,
  stepId,
  generation: 1,
  executionId: executionOf(runId, stepId),
  previous: null,
  decision: null,
});

/** RunStep's payload after Backoff: its own retry answer as `previous`. */
const afterBackoff = (runId: string, stepId: string, previous: StepNext): RunStepRequest => ({
  ...firstCall(runId, stepId),
  previous,
});

function counting(binding: CapabilityBinding): CapabilityBinding & { calls: number } {
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
const slow = (binding: CapabilityBinding, ms: number): CapabilityBinding => ({
  kind: binding.kind,
  invoke: async (call) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return binding.invoke(call);
  },
});

const echoOf = (pack = createConformancePack()) =>
  counting(pack.bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);
const attemptsOf = (runId: string, stepId: string) => store.listAttempts(runId, stepId);
const stepOf = async (runId: string, stepId: string): Promise<StepRecord> => {
  const record = await store.getStep(runId, stepId);
  if (!record) throw new Error(`no step ${stepId} in ${runId}`);
  return record;
};
const DONE_1: StepNext = { action: 'done', attempt: 1 };

describe('RunStep on the DynamoDB store (dynalite)', () => {
  it('claims a tool step, runs it with its evaluated input and records output, evidence and an [exec] trace entry', async () => {
    const runId = await seedRun(
      [
        step('first', CONFORMANCE_TARGETS.echo, { value: 1 }),
        step('second', CONFORMANCE_TARGETS.echo, { value: 2 }, ['first']),
        step(
          'third',
          CONFORMANCE_TARGETS.echo,
          { value: '{% [$objective, $outputs.first.value, $outputs.second.value] %}' },
          ['second'],
        ),
        step('fourth', CONFORMANCE_TARGETS.echo, { value: 4 }, ['third']),
      ],
      {
        first: { status: 'succeeded', output: { value: 'one' } },
        second: { status: 'succeeded', output: { value: 'two' }, remaining: 0, released: ['first'] },
        third: { status: 'ready', remaining: 0, released: ['second'] },
      },
    );
    const { runStep, executions, events } = runner(createConformancePack().bindings);

    const next = await runStep(firstCall(runId, 'third'));

    expect(next).toEqual(DONE_1);
    const [attempt, ...more] = await attemptsOf(runId, 'third');
    expect(more).toEqual([]);
    const evaluated = { value: [OBJECTIVE, 'one', 'two'] };
    expect(attempt).toMatchObject({
      attempt: 1,
      outcome: 'succeeded',
      target: CONFORMANCE_TARGETS.echo,
      input: evaluated,
      output: evaluated,
      confidence: null,
      evidence: { binding: 'builtin', sideEffect: 'none', verdict: 'pass' },
    });
    expect(attempt?.evidence.durationMs).toEqual(expect.any(Number));
    const record = await stepOf(runId, 'third');
    expect(record).toMatchObject({
      status: 'succeeded',
      output: evaluated,
      attempts: 1,
      claimedBy: executionOf(runId, 'third'),
    });
    const exec = record.trace.filter((t) => t.kind === 'exec').map((t) => t.text);
    expect(exec).toEqual([
      `claimed by ${executionOf(runId, 'third')}`,
      expect.stringMatching(/^attempt 1: tool:conformance\.echo via builtin succeeded in \d+ ms$/),
    ]);
    expect(record.trace.at(-1)).toMatchObject({ kind: 'judge', text: 'succeeded with attempt 1' });
    expect(events.events.map((e) => e.detailType)).toEqual(['StepStarted', 'StepSucceeded']);
    // The dependent is released and its execution started, in the same invocation.
    expect(executions.starts).toEqual([
      {
        machine: 'step',
        name: stepExecutionName(runId, 'fourth', 1),
        input: stepExecutionInput({ runId, stepId: 'fourth', generation: 1 }),
      },
    ]);
    expect((await stepOf(runId, 'fourth')).status).toBe('ready');
  });

  it('records an agent confidence', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.scripted, { output: { x: 1 }, confidence: 0.4 })]);

    const next = await runner(createConformancePack().bindings).runStep(firstCall(runId, 'a'));

    expect(next).toEqual(DONE_1);
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({
      output: { x: 1 },
      confidence: 0.4,
      evidence: { binding: 'builtin' },
    });
    expect(await stepOf(runId, 'a')).toMatchObject({ status: 'succeeded', output: { x: 1 }, confidence: 0.4 });
  });

  it('replays a mutating call from its idempotency record after a crash after the side effect: the ledger is written once', async () => {
    const pack = createConformancePack();
    const ledger = counting(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding);
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: { invoice: 7 } })]);
    const bindings = { [CONFORMANCE_TARGETS.ledger]: ledger };
    // The first invocation writes the ledger, then dies before it records the attempt (with the step's success).
    const crashing = runner(bindings, { over: crashOnce('transitionStep', successWrite) });

    await expect(crashing.runStep(firstCall(runId, 'pay'))).rejects.toThrow(/Lambda died in transitionStep/);
    expect(pack.ledger.entries()).toHaveLength(1);
    expect(await attemptsOf(runId, 'pay')).toEqual([]);
    // The step machine retries the Task with the same payload; then a duplicate of that call arrives.
    const { runStep } = runner(bindings);
    const repeated = await runStep(firstCall(runId, 'pay'));
    const duplicate = await runStep(firstCall(runId, 'pay'));

    expect([repeated, duplicate]).toEqual([DONE_1, DONE_1]);
    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
    const attempts = await attemptsOf(runId, 'pay');
    expect(attempts.map((a) => [a.attempt, a.outcome, a.evidence.replayed])).toEqual([[1, 'succeeded', true]]);
    expect(attempts[0]?.evidence.idempotencyKey).toBe(`${runId}#pay#1`);
    const entryId = pack.ledger.entries()[0]?.entryId;
    expect(attempts[0]?.output).toEqual({ entryId });
    expect(await stepOf(runId, 'pay')).toMatchObject({ status: 'succeeded', output: { entryId }, attempts: 1 });
  });

  it('records the first call of a mutating step as not replayed, with its idempotency key', async () => {
    const pack = createConformancePack();
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'once' })]);

    const next = await runner(pack.bindings).runStep(firstCall(runId, 'pay'));

    expect(next).toEqual(DONE_1);
    expect((await attemptsOf(runId, 'pay'))[0]?.evidence).toMatchObject({
      sideEffect: 'mutating',
      idempotencyKey: `${runId}#pay#1`,
      replayed: false,
    });
    expect(pack.ledger.entries().map((e) => e.idempotencyKey)).toEqual([`${runId}#pay#1`]);
  });

  it('lets a retry call a side effect again after a failed call (the record is aborted)', async () => {
    let calls = 0;
    const charge = builtinTool('charge', async () => {
      calls++;
      if (calls === 1) throw capabilityError('E_GATEWAY', 'payment gateway down', { retryable: true });
      return { chargeId: `ch-${calls}` };
    });
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const { runStep } = runner({ [CHARGE]: charge });

    const first = await runStep(firstCall(runId, 'charge'));
    expect(first).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect(await stepOf(runId, 'charge')).toMatchObject({
      status: 'retrying',
      attempts: 1,
      error: { code: 'E_GATEWAY', message: expect.stringContaining('down'), retryable: true },
    });
    const second = await runStep(afterBackoff(runId, 'charge', first));
    const duplicate = await runStep(afterBackoff(runId, 'charge', first));

    expect(second).toEqual({ action: 'done', attempt: 2 });
    expect(duplicate).toEqual({ action: 'done', attempt: 2 });
    expect(calls).toBe(2);
    const attempts = await attemptsOf(runId, 'charge');
    expect(attempts.map((a) => [a.attempt, a.outcome, a.output, a.error?.code])).toEqual([
      [1, 'failed', undefined, 'E_GATEWAY'],
      [2, 'succeeded', { chargeId: 'ch-2' }, undefined],
    ]);
    expect(attempts[1]?.evidence).toMatchObject({ replayed: false, idempotencyKey: `${runId}#charge#1` });
    expect(await stepOf(runId, 'charge')).toMatchObject({
      status: 'succeeded',
      output: { chargeId: 'ch-2' },
      attempts: 2,
      error: null,
    });
  });

  it('does not call a side effect another execution is still calling: a retryable E_IDEMPOTENCY_IN_PROGRESS', async () => {
    const charge = counting(builtinTool('charge', async () => ({ chargeId: 'x' })));
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const now = Math.floor(Date.now() / 1000);
    expect(await store.beginIdempotent(`${runId}#charge#1`, now + 600, now)).toBeUndefined();

    const next = await runner({ [CHARGE]: charge }).runStep(firstCall(runId, 'charge'));

    expect(next).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect(charge.calls).toBe(0);
    expect((await attemptsOf(runId, 'charge'))[0]).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_IDEMPOTENCY_IN_PROGRESS', retryable: true },
    });
    expect((await stepOf(runId, 'charge')).status).toBe('retrying');
  });

  it('fails the step for good with E_OUTPUT_SCHEMA when the output breaks the outputSchema', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.scripted, { output: 5, confidence: 0.9 })]);

    const next = await runner(createConformancePack().bindings).runStep(firstCall(runId, 'a'));

    expect(next).toEqual(DONE_1);
    const record = await stepOf(runId, 'a');
    expect(record).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'E_OUTPUT_SCHEMA', retryable: false },
    });
    expect(record.output).toBeUndefined();
    expect(record.trace.at(-1)?.text).toContain('E_OUTPUT_SCHEMA');
    // The attempt keeps what the capability answered, and the verdict on it.
    const [attempt] = await attemptsOf(runId, 'a');
    expect(attempt).toMatchObject({ outcome: 'succeeded', output: 5, evidence: { verdict: 'fail' } });
  });

  it('fails the step for good with E_OUTPUT_TOO_LARGE, saying why, when the output is over the limit', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 'x'.repeat(2000) })]);

    const next = await runner(createConformancePack().bindings, { capabilityCall: { maxOutputBytes: 1000 } }).runStep(
      firstCall(runId, 'a'),
    );

    expect(next).toEqual(DONE_1);
    const record = await stepOf(runId, 'a');
    expect(record).toMatchObject({ status: 'failed', error: { code: 'E_OUTPUT_TOO_LARGE', retryable: false } });
    expect(record.error?.message).toMatch(/2012 bytes of JSON, over the limit of 1000 bytes/);
    expect(record.error?.message).toMatch(/return a reference to the data/);
    const [attempt] = await attemptsOf(runId, 'a');
    expect(attempt).toMatchObject({ outcome: 'failed', error: { code: 'E_OUTPUT_TOO_LARGE' } });
    expect(attempt?.output).toBeUndefined();
  });

  it('survives a 250 KB result with the default limit: no crash, a clear failure, the input not copied', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 'y'.repeat(250_000) })]);

    const next = await runner(createConformancePack().bindings).runStep(firstCall(runId, 'a'));

    expect(next).toEqual(DONE_1);
    expect(await stepOf(runId, 'a')).toMatchObject({
      status: 'failed',
      error: { code: 'E_OUTPUT_TOO_LARGE', message: expect.stringMatching(/over the limit of 200000 bytes/) },
    });
    const [attempt] = await attemptsOf(runId, 'a');
    expect(attempt?.input).toBeUndefined();
    expect(attempt?.output).toBeUndefined();
    expect(attempt?.evidence).toMatchObject({ inputRecorded: false, inputBytes: 250_012 });
  });

  it('replays an oversized side-effect answer as the same failure without acting again', async () => {
    const bulk = counting(builtinTool('bulk', async () => ({ rows: 'z'.repeat(3000) })));
    const runId = await seedRun([step('export', BULK, {})]);
    const bindings = { [BULK]: bulk };
    const capabilityCall = { maxOutputBytes: 1000 };

    await expect(
      runner(bindings, { capabilityCall, over: crashOnce('putAttempt') }).runStep(firstCall(runId, 'export')),
    ).rejects.toThrow(/Lambda died/);
    const repeated = await runner(bindings, { capabilityCall }).runStep(firstCall(runId, 'export'));

    expect(repeated).toEqual(DONE_1);
    expect(bulk.calls).toBe(1);
    const [attempt] = await attemptsOf(runId, 'export');
    expect(attempt).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_OUTPUT_TOO_LARGE', retryable: false },
      evidence: { replayed: true },
    });
    expect(await stepOf(runId, 'export')).toMatchObject({ status: 'failed', error: { code: 'E_OUTPUT_TOO_LARGE' } });
  });

  it('goes on from the recorded attempt, without calling again, when RunStep is repeated after recording it', async () => {
    const echo = echoOf();
    const runId = await seedRun([
      step('a', CONFORMANCE_TARGETS.echo, { value: 1 }),
      step('b', CONFORMANCE_TARGETS.echo, { value: 2 }, ['a']),
    ]);
    const bindings = { [CONFORMANCE_TARGETS.echo]: echo };
    // A first attempt's success is recorded by the step's success write: dies right after it, before the release.
    const crashing = runner(bindings, { over: crashAfter('transitionStep', successWrite) });

    await expect(crashing.runStep(firstCall(runId, 'a'))).rejects.toThrow(/Lambda died after transitionStep/);
    expect((await attemptsOf(runId, 'a')).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'succeeded']]);
    expect((await stepOf(runId, 'b')).status).toBe('pending');
    const { runStep, executions } = runner(bindings);
    const repeated = await runStep(firstCall(runId, 'a'));

    expect(repeated).toEqual(DONE_1);
    expect(echo.calls).toBe(1);
    expect(await attemptsOf(runId, 'a')).toHaveLength(1);
    expect(await stepOf(runId, 'a')).toMatchObject({ status: 'succeeded', output: { value: 1 }, attempts: 1 });
    expect((await stepOf(runId, 'b')).status).toBe('ready');
    expect(executions.starts.map((s) => s.name)).toEqual([stepExecutionName(runId, 'b', 1)]);
  });

  it('records a first attempt that succeeds with the step’s success write, not with a write of its own', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })]);
    let ownWrites = 0;
    const putAttempt: Store['putAttempt'] = (attempt) => {
      ownWrites++;
      return store.putAttempt(attempt);
    };

    const next = await runner(createConformancePack().bindings, { over: { putAttempt } }).runStep(
      firstCall(runId, 'a'),
    );

    expect(next).toEqual(DONE_1);
    expect(ownWrites).toBe(0);
    expect(await attemptsOf(runId, 'a')).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'succeeded',
        input: { value: 1 },
        output: { value: 1 },
        verdict: 'pass',
        revision: 1,
        evidence: expect.objectContaining({ binding: 'builtin', sideEffect: 'none', verdict: 'pass' }),
      }),
    ]);
    expect(await stepOf(runId, 'a')).toMatchObject({ status: 'succeeded', output: { value: 1 }, attempts: 1 });
  });

  it('keeps the step where a duplicated copy’s record of attempt 1 put it: a later success follows that record', async () => {
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    // While this copy calls, a duplicate of the invocation records attempt 1 as failed and moves the step to retrying.
    const charge = builtinTool('charge', async () => {
      await store.putAttempt({
        runId,
        stepId: 'charge',
        generation: 1,
        attempt: 1,
        target: CHARGE,
        startedAt: at(1),
        finishedAt: at(1),
        outcome: 'failed',
        error: { code: 'E_GATEWAY', message: 'gateway timed out', retryable: true },
        verdict: 'fail',
        evidence: {},
      });
      await store.transitionStep(
        runId,
        'charge',
        { generation: 1, from: ['running'] },
        {
          status: 'retrying',
          attempts: 1,
          error: { code: 'E_GATEWAY', message: 'gateway timed out', retryable: true },
        },
      );
      return { chargeId: 'ch-1' };
    });

    const next = await runner({ [CHARGE]: charge }).runStep(firstCall(runId, 'charge'));

    expect(next).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect((await attemptsOf(runId, 'charge')).map((a) => [a.attempt, a.outcome, a.error?.code])).toEqual([
      [1, 'failed', 'E_GATEWAY'],
    ]);
    expect(await stepOf(runId, 'charge')).toMatchObject({ status: 'retrying', attempts: 1 });
  });

  it('goes on from the recorded attempt, without calling again, when a retry entry is repeated after recording it', async () => {
    const pack = createConformancePack();
    const flaky = counting(pack.bindings[CONFORMANCE_TARGETS.flaky] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.flaky, { key: 'k', failures: 1 })]);
    const bindings = { [CONFORMANCE_TARGETS.flaky]: flaky };
    const { runStep } = runner(bindings);
    const retry = await runStep(firstCall(runId, 'a'));
    expect(retry).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    const crashing = runner(bindings, {
      over: crashOnce('transitionStep', (_runId, _stepId, _condition, patch) => patch.status === 'succeeded'),
    });

    await expect(crashing.runStep(afterBackoff(runId, 'a', retry))).rejects.toThrow(/Lambda died/);
    const repeated = await runStep(afterBackoff(runId, 'a', retry));

    expect(repeated).toEqual({ action: 'done', attempt: 2 });
    expect(flaky.calls).toBe(2);
    expect((await attemptsOf(runId, 'a')).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(await stepOf(runId, 'a')).toMatchObject({ status: 'succeeded', output: { attempts: 2 }, attempts: 2 });
  });

  it('runs duplicated copies of the first call once, and every copy answers what the attempt record says', async () => {
    const pack = createConformancePack();
    const ledger = counting(slow(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding, 200));
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'twice?' })]);
    const { runStep } = runner({ [CONFORMANCE_TARGETS.ledger]: ledger });

    const answers = await Promise.all([1, 2, 3].map(() => runStep(firstCall(runId, 'pay'))));

    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
    // A copy that found the call in progress may have recorded attempt 1 first (a retryable failure); the copy that
    // made the call then follows that record too, and the retry replays the call's result.
    const [first] = await attemptsOf(runId, 'pay');
    const expected: StepNext =
      first?.outcome === 'succeeded' ? DONE_1 : { action: 'retry', attempt: 2, delaySeconds: 1 };
    expect(answers).toEqual([expected, expected, expected]);
    if (expected.action === 'retry')
      expect(await runStep(afterBackoff(runId, 'pay', expected))).toEqual({ action: 'done', attempt: 2 });
    expect(ledger.calls).toBe(1);
    const last = (await attemptsOf(runId, 'pay')).at(-1);
    expect(last).toMatchObject({ outcome: 'succeeded', output: { entryId: pack.ledger.entries()[0]?.entryId } });
    expect(await stepOf(runId, 'pay')).toMatchObject({
      status: 'succeeded',
      output: last?.output,
      attempts: last?.attempt,
    });
  });

  it.each([
    ['permanent', false, DONE_1, 'failed'],
    ['retryable', true, { action: 'retry', attempt: 2, delaySeconds: 1 }, 'retrying'],
  ] as const)('keeps a %s capability failure as it is', async (_label, retryable, next, status) => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.fail, { message: 'no such invoice', retryable })]);

    const answer = await runner(createConformancePack().bindings).runStep(firstCall(runId, 'a'));

    expect(answer).toEqual(next);
    const error = { code: 'E_CONFORMANCE_FAIL', message: 'no such invoice', retryable };
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({ attempt: 1, outcome: 'failed', error });
    expect(await stepOf(runId, 'a')).toMatchObject({ status, attempts: 1, error });
  });

  it('fails the step for good with E_NO_BINDING when no binding serves the target', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })]);

    const next = await runner({}).runStep(firstCall(runId, 'a'));

    expect(next).toEqual(DONE_1);
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_NO_BINDING', retryable: false },
    });
    expect(await stepOf(runId, 'a')).toMatchObject({
      status: 'failed',
      error: { code: 'E_NO_BINDING', retryable: false },
    });
  });

  it.each([
    ['the input breaks the inputSchema', { nope: 1 }, 'E_INPUT_SCHEMA'],
    ['an input expression fails', { value: '{% $error("bad input") %}' }, 'E_INPUT_EXPRESSION'],
  ])('fails the step at the claim, without calling, when %s', async (_label, input, code) => {
    const echo = echoOf();
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, input)]);

    const next = await runner({ [CONFORMANCE_TARGETS.echo]: echo }).runStep(firstCall(runId, 'a'));

    expect(next).toEqual({ action: 'done', attempt: 0 });
    expect(echo.calls).toBe(0);
    expect(await stepOf(runId, 'a')).toMatchObject({
      status: 'failed',
      error: { code, retryable: false },
      claimedBy: executionOf(runId, 'a'),
    });
    expect(await attemptsOf(runId, 'a')).toEqual([]);
  });

  it.each([
    ['a superseded generation', { generation: 2 }, {}],
    ['a cancelled step', { status: 'cancelled' as const }, {}],
    ['a step another execution claimed', { status: 'running' as const, claimedBy: 'arn:test:other' }, {}],
    ['a run that is over', {}, { status: 'cancelled' as const }],
  ])('does nothing for %s', async (_label, record, run) => {
    const echo = echoOf();
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })], { a: record }, run);
    const before = await stepOf(runId, 'a');

    const next = await runner({ [CONFORMANCE_TARGETS.echo]: echo }).runStep(firstCall(runId, 'a'));

    expect(next).toEqual({ action: 'done', attempt: 0 });
    expect(echo.calls).toBe(0);
    expect(await attemptsOf(runId, 'a')).toEqual([]);
    expect(await stepOf(runId, 'a')).toEqual(before);
  });

  it('runs a retry while the step says retrying, with the input attempt 1 recorded', async () => {
    const echo = echoOf();
    // The plan's input would evaluate to the objective now; attempt 1 recorded what the claim evaluated.
    const runId = uniqueId('run');
    await seedRun(
      [step('a', CONFORMANCE_TARGETS.echo, { value: '{% $objective %}' })],
      { a: { status: 'retrying', attempts: 1, claimedBy: executionOf(runId, 'a') } },
      { runId },
    );
    await store.putAttempt({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
      target: CONFORMANCE_TARGETS.echo,
      startedAt: at(1),
      finishedAt: at(2),
      outcome: 'failed',
      input: { value: 'as claimed' },
      error: { code: 'E_CAPABILITY_TIMEOUT', message: 'timed out', retryable: true },
      evidence: {},
    });

    const next = await runner({ [CONFORMANCE_TARGETS.echo]: echo }).runStep(
      afterBackoff(runId, 'a', { action: 'retry', attempt: 2, delaySeconds: 1 }),
    );

    expect(next).toEqual({ action: 'done', attempt: 2 });
    expect(echo.calls).toBe(1);
    expect((await attemptsOf(runId, 'a'))[1]).toMatchObject({
      attempt: 2,
      outcome: 'succeeded',
      input: { value: 'as claimed' },
      output: { value: 'as claimed' },
    });
    expect(await stepOf(runId, 'a')).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});
