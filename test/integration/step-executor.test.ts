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
import type { StepRecord, Store } from '../../shared/ports/store.ts';
import { createStepExecutor, type StepExecutorConfig } from '../../shared/services/step-executor.ts';
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

let dynamo: TestDynamo;
let store: Store;
beforeAll(async () => {
  dynamo = await startDynalite();
  store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
});
afterAll(async () => {
  await dynamo.stop();
});

/** A run with one plan revision and step records; the step under test is running (claimed). */
async function seedRun(steps: PlanStep[], records: Partial<Record<string, Partial<StepRecord>>> = {}) {
  const runId = uniqueId('run');
  await store.createRun({
    runId,
    status: 'running',
    objective: 'Pay the invoices',
    revision: 1,
    createdAt: at(0),
    updatedAt: at(0),
    replans: 0,
  });
  await store.putPlanRevision(
    runId,
    { schemaVersion: 1, revision: 1, objective: 'Pay the invoices', steps },
    'initial',
  );
  await store.putSteps(
    steps.map((s) => ({
      runId,
      stepId: s.id,
      status: 'running',
      generation: 1,
      upstream: s.dependsOn,
      remaining: 0,
      released: [...s.dependsOn],
      attempts: 1,
      trace: [],
      updatedAt: at(0),
      ...records[s.id],
    })),
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

function executor(bindings: Record<string, CapabilityBinding>, config: StepExecutorConfig = {}, over?: Partial<Store>) {
  return createStepExecutor({
    store: { ...store, ...over },
    catalog,
    registry: createCapabilityRegistry(bindings),
    clock: () => new Date(),
    config,
  });
}

const attemptsOf = async (runId: string, stepId: string) => store.listAttempts(runId, stepId);

describe('step executor (DynamoDB store on dynalite)', () => {
  it('runs a tool with its evaluated input and records output, evidence and an [exec] trace entry', async () => {
    const pack = createConformancePack();
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
      ],
      {
        first: { status: 'succeeded', output: { value: 'one' } },
        second: { status: 'succeeded', output: { value: 'two' } },
      },
    );

    const result = await executor(pack.bindings).execute({ runId, stepId: 'third', generation: 1, attempt: 1 });

    expect(result).toEqual({ ok: true });
    const [attempt] = await attemptsOf(runId, 'third');
    expect(attempt).toMatchObject({
      outcome: 'succeeded',
      target: CONFORMANCE_TARGETS.echo,
      input: { value: ['Pay the invoices', 'one', 'two'] },
      output: { value: ['Pay the invoices', 'one', 'two'] },
      confidence: null,
      evidence: { binding: 'builtin', sideEffect: 'none', replayed: false },
    });
    const record = await store.getStep(runId, 'third');
    expect(record?.trace.map((t) => t.kind)).toEqual(['exec']);
    expect(record?.trace[0]?.text).toContain('succeeded');
  });

  it('records an agent confidence', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.scripted, { output: { x: 1 }, confidence: 0.4 })]);

    const result = await executor(createConformancePack().bindings).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toEqual({ ok: true });
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({ output: { x: 1 }, confidence: 0.4 });
  });

  it('replays a mutating step from its idempotency record: the ledger is written once', async () => {
    const pack = createConformancePack();
    const ledger = counting(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding);
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: { invoice: 7 } })]);
    const run = executor({ [CONFORMANCE_TARGETS.ledger]: ledger });

    const first = await run.execute({ runId, stepId: 'pay', generation: 1, attempt: 1 });
    const replay = await run.execute({ runId, stepId: 'pay', generation: 1, attempt: 2 });

    expect([first, replay]).toEqual([{ ok: true }, { ok: true }]);
    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
    const attempts = await attemptsOf(runId, 'pay');
    expect(attempts.map((a) => [a.attempt, a.outcome, a.evidence.replayed])).toEqual([
      [1, 'succeeded', false],
      [2, 'succeeded', true],
    ]);
    expect(attempts[1]?.output).toEqual(attempts[0]?.output);
    expect(attempts[0]?.evidence.idempotencyKey).toBe(`${runId}#pay#1`);
  });

  it('replays instead of acting again when the executor crashed after the side effect', async () => {
    const pack = createConformancePack();
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'crash' })]);
    const crashing = executor(
      pack.bindings,
      {},
      {
        updateAttempt: async () => {
          throw new Error('Lambda died before recording the attempt');
        },
      },
    );

    await expect(crashing.execute({ runId, stepId: 'pay', generation: 1, attempt: 1 })).rejects.toThrow(/Lambda died/);
    const retried = await executor(pack.bindings).execute({ runId, stepId: 'pay', generation: 1, attempt: 2 });

    expect(retried).toEqual({ ok: true });
    expect(pack.ledger.entries()).toHaveLength(1);
  });

  it('lets a retry call a side effect again after a failed call (the record is aborted)', async () => {
    let calls = 0;
    const charge = builtinTool('charge', async () => {
      calls++;
      if (calls === 1) throw capabilityError('E_GATEWAY', 'payment gateway down', { retryable: true });
      return { chargeId: `ch-${calls}` };
    });
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const run = executor({ [CHARGE]: charge });

    const first = await run.execute({ runId, stepId: 'charge', generation: 1, attempt: 1 });
    const second = await run.execute({ runId, stepId: 'charge', generation: 1, attempt: 2 });
    const duplicate = await run.execute({ runId, stepId: 'charge', generation: 1, attempt: 3 });

    expect(first).toEqual({
      ok: false,
      error: { code: 'E_GATEWAY', message: expect.stringContaining('down'), retryable: true },
    });
    expect(second).toEqual({ ok: true });
    expect(duplicate).toEqual({ ok: true });
    expect(calls).toBe(2);
    expect((await attemptsOf(runId, 'charge')).map((a) => a.output)).toEqual([
      undefined,
      { chargeId: 'ch-2' },
      { chargeId: 'ch-2' },
    ]);
  });

  it('does not call a side effect another execution is still calling', async () => {
    const charge = counting(builtinTool('charge', async () => ({ chargeId: 'x' })));
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const now = Math.floor(Date.now() / 1000);
    expect(await store.beginIdempotent(`${runId}#charge#1`, now + 600, now)).toBeUndefined();

    const result = await executor({ [CHARGE]: charge }).execute({ runId, stepId: 'charge', generation: 1, attempt: 1 });

    expect(result).toMatchObject({ ok: false, error: { code: 'E_IDEMPOTENCY_IN_PROGRESS', retryable: true } });
    expect(charge.calls).toBe(0);
  });

  it('fails permanently with E_OUTPUT_SCHEMA when the output breaks the outputSchema', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.scripted, { output: 5, confidence: 0.9 })]);

    const result = await executor(createConformancePack().bindings).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toMatchObject({ ok: false, error: { code: 'E_OUTPUT_SCHEMA', retryable: false } });
    const [attempt] = await attemptsOf(runId, 'a');
    expect(attempt).toMatchObject({ outcome: 'failed', error: { code: 'E_OUTPUT_SCHEMA', retryable: false } });
    expect(attempt?.output).toBeUndefined();
    expect((await store.getStep(runId, 'a'))?.trace[0]?.text).toContain('E_OUTPUT_SCHEMA');
  });

  it('fails permanently with E_OUTPUT_TOO_LARGE, saying why, when the output is over the limit', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 'x'.repeat(2000) })]);

    const result = await executor(createConformancePack().bindings, { maxOutputBytes: 1000 }).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toMatchObject({ ok: false, error: { code: 'E_OUTPUT_TOO_LARGE', retryable: false } });
    if (result.ok) throw new Error('expected a failure');
    expect(result.error.message).toMatch(/2012 bytes of JSON, over the limit of 1000 bytes/);
    expect((await attemptsOf(runId, 'a'))[0]?.outcome).toBe('failed');
  });

  it('survives a 250 KB result with the default limit: no crash, a clear failure, the input not copied', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 'y'.repeat(250_000) })]);

    const result = await executor(createConformancePack().bindings).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toMatchObject({ ok: false, error: { code: 'E_OUTPUT_TOO_LARGE' } });
    const [attempt] = await attemptsOf(runId, 'a');
    expect(attempt?.input).toBeUndefined();
    expect(attempt?.evidence).toMatchObject({ inputRecorded: false, inputBytes: 250_012 });
  });

  it('records an oversized side-effect answer so a replay fails the same way without acting again', async () => {
    const bulk = counting(builtinTool('bulk', async () => ({ rows: 'z'.repeat(3000) })));
    const runId = await seedRun([step('export', BULK, {})]);
    const run = executor({ [BULK]: bulk }, { maxOutputBytes: 1000 });

    const first = await run.execute({ runId, stepId: 'export', generation: 1, attempt: 1 });
    const second = await run.execute({ runId, stepId: 'export', generation: 1, attempt: 2 });

    expect(first).toMatchObject({ ok: false, error: { code: 'E_OUTPUT_TOO_LARGE' } });
    expect(second).toMatchObject({ ok: false, error: { code: 'E_OUTPUT_TOO_LARGE' } });
    expect(bulk.calls).toBe(1);
  });

  it('returns the recorded outcome of an attempt that already ran, without calling again', async () => {
    const echo = counting(createConformancePack().bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })]);
    const run = executor({ [CONFORMANCE_TARGETS.echo]: echo });

    const first = await run.execute({ runId, stepId: 'a', generation: 1, attempt: 1 });
    const again = await run.execute({ runId, stepId: 'a', generation: 1, attempt: 1 });

    expect([first, again]).toEqual([{ ok: true }, { ok: true }]);
    expect(echo.calls).toBe(1);
    expect(await attemptsOf(runId, 'a')).toHaveLength(1);
  });

  it('returns a recorded failure as it was, and an unfinished attempt as retryable, without calling', async () => {
    const echo = counting(createConformancePack().bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })]);
    const base = {
      runId,
      stepId: 'a',
      generation: 1,
      target: CONFORMANCE_TARGETS.echo,
      startedAt: at(1),
      evidence: {},
    };
    await store.putAttempt({
      ...base,
      attempt: 1,
      outcome: 'failed',
      error: { code: 'E_X', message: 'x', retryable: false },
    });
    await store.putAttempt({ ...base, attempt: 2, outcome: 'running' });
    const run = executor({ [CONFORMANCE_TARGETS.echo]: echo });

    const failed = await run.execute({ runId, stepId: 'a', generation: 1, attempt: 1 });
    const unfinished = await run.execute({ runId, stepId: 'a', generation: 1, attempt: 2 });

    expect(failed).toEqual({ ok: false, error: { code: 'E_X', message: 'x', retryable: false } });
    expect(unfinished).toMatchObject({ ok: false, error: { code: 'E_ATTEMPT_IN_PROGRESS', retryable: true } });
    expect(echo.calls).toBe(0);
  });

  it('runs a duplicated invocation of one attempt once when both arrive together', async () => {
    const pack = createConformancePack();
    const ledger = counting(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding);
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'twice?' })]);
    const run = executor({ [CONFORMANCE_TARGETS.ledger]: ledger });

    await Promise.all([1, 2, 3].map(() => run.execute({ runId, stepId: 'pay', generation: 1, attempt: 1 })));

    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
  });

  it('returns a capability failure without throwing and keeps its retryability', async () => {
    const runId = await seedRun([
      step('a', CONFORMANCE_TARGETS.fail, { message: 'no such invoice', retryable: false }),
    ]);

    const result = await executor(createConformancePack().bindings).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toEqual({
      ok: false,
      error: { code: 'E_CONFORMANCE_FAIL', message: 'no such invoice', retryable: false },
    });
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_CONFORMANCE_FAIL' },
    });
  });

  it.each([
    ['the input breaks the inputSchema', { nope: 1 }, 'E_INPUT_SCHEMA'],
    ['an input expression fails', { value: '{% $error("bad input") %}' }, 'E_INPUT_EXPRESSION'],
  ])('fails permanently without calling when %s', async (_label, input, code) => {
    const echo = counting(createConformancePack().bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, input)]);

    const result = await executor({ [CONFORMANCE_TARGETS.echo]: echo }).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toMatchObject({ ok: false, error: { code, retryable: false } });
    expect(echo.calls).toBe(0);
    expect((await attemptsOf(runId, 'a'))[0]?.outcome).toBe('failed');
  });

  it('fails permanently with E_NO_BINDING when no binding serves the target', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })]);

    const result = await executor({}).execute({ runId, stepId: 'a', generation: 1, attempt: 1 });

    expect(result).toMatchObject({ ok: false, error: { code: 'E_NO_BINDING', retryable: false } });
  });

  it.each([
    ['a superseded generation', { generation: 2 }, 'E_STALE_GENERATION'],
    ['a cancelled step', { status: 'cancelled' as const }, 'E_STEP_NOT_RUNNING'],
  ])('does nothing for %s', async (_label, record, code) => {
    const echo = counting(createConformancePack().bindings[CONFORMANCE_TARGETS.echo] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })], { a: record });

    const result = await executor({ [CONFORMANCE_TARGETS.echo]: echo }).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
    });

    expect(result).toMatchObject({ ok: false, error: { code, retryable: false } });
    expect(echo.calls).toBe(0);
    expect(await attemptsOf(runId, 'a')).toEqual([]);
  });

  it('runs a retry while the step record says retrying', async () => {
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.echo, { value: 1 })], { a: { status: 'retrying' } });

    const result = await executor(createConformancePack().bindings).execute({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 2,
    });

    expect(result).toEqual({ ok: true });
    expect((await attemptsOf(runId, 'a'))[0]).toMatchObject({ attempt: 2, outcome: 'succeeded' });
  });
});
