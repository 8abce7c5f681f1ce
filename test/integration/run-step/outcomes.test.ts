/**
 * RunStep's own answers on the DynamoDB store (dynalite): a step claimed, called and verified, the outcome it records
 * (succeeded, failed for good, retrying), and the cases it leaves alone (not its step, not its generation, a run
 * that is over).
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS, createConformancePack } from '../../../shared/capabilities/conformance.ts';
import { stepExecutionInput, stepExecutionName } from '../../../shared/ports/executions.ts';
import {
  afterBackoff,
  claimOf,
  DONE_1,
  echoOf,
  firstCall,
  OBJECTIVE,
  step,
  useRunStepStore,
} from '../../support/run-step-harness.ts';
import { at, uniqueId } from '../../support/store-fixtures.ts';

const { store, runner, seedRun, attemptsOf, stepOf } = useRunStepStore();

describe('RunStep outcomes on the DynamoDB store (dynalite)', () => {
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
      claimedBy: claimOf(runId, 'third'),
    });
    const exec = record.trace.filter((t) => t.kind === 'exec').map((t) => t.text);
    // The start's entry is the decider's StepStarted (the step is seeded started here); the attempt's is RunStep's.
    expect(exec).toEqual([
      expect.stringMatching(/^attempt 1: tool:conformance\.echo via builtin succeeded in \d+ ms$/),
    ]);
    expect(record.trace.at(-1)).toMatchObject({ kind: 'judge', text: 'succeeded with attempt 1' });
    // Its success, then its dependent's start (its own start was the decider's, seeded here).
    expect(events.events.map((e) => `${e.detailType}:${String(e.detail.stepId)}`)).toEqual([
      'StepSucceeded:third',
      'StepStarted:fourth',
    ]);
    // The dependent is released and started by the decider, once RunStep reported, with its brief.
    const brief = {
      revision: 1,
      step: step('fourth', CONFORMANCE_TARGETS.echo, { value: 4 }, ['third']),
      upstream: ['third'],
      outputs: [],
    };
    expect(executions.starts).toEqual([
      {
        machine: 'step',
        name: stepExecutionName(runId, 'fourth', 1),
        input: stepExecutionInput({ runId, stepId: 'fourth', generation: 1 }, brief),
      },
    ]);
    expect(await stepOf(runId, 'fourth')).toMatchObject({
      status: 'running',
      remaining: 0,
      claimedBy: stepExecutionName(runId, 'fourth', 1),
    });
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
      claimedBy: claimOf(runId, 'a'),
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
      { a: { status: 'retrying', attempts: 1, claimedBy: claimOf(runId, 'a') } },
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
