/**
 * RunStep entered again with the same payload (a Task retried after a lost answer, a duplicated invocation) on the
 * DynamoDB store (dynalite): it goes on from the attempt record instead of calling again, and every copy answers
 * what that record says.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS, createConformancePack } from '../../../shared/capabilities/conformance.ts';
import type { CapabilityBinding } from '../../../shared/ports/capabilities.ts';
import { stepExecutionName } from '../../../shared/ports/executions.ts';
import type { Store } from '../../../shared/ports/store.ts';
import type { StepNext } from '../../../shared/services/coordinator-types.ts';
import {
  afterBackoff,
  counting,
  DONE_1,
  echoOf,
  firstCall,
  slow,
  step,
  successWrite,
  useRunStepStore,
} from '../../support/run-step-harness.ts';

const { store, runner, crashOnce, crashAfter, seedRun, attemptsOf, stepOf } = useRunStepStore();

describe('RunStep repeated entries (dynalite)', () => {
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
    expect((await stepOf(runId, 'b')).status).toBe('running');
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

  it('goes on from the recorded attempt, without calling again, when a retry entry is repeated after recording it', async () => {
    const pack = createConformancePack();
    const flaky = counting(pack.bindings[CONFORMANCE_TARGETS.flaky] as CapabilityBinding);
    const runId = await seedRun([step('a', CONFORMANCE_TARGETS.flaky, { key: 'k', failures: 1 })]);
    const bindings = { [CONFORMANCE_TARGETS.flaky]: flaky };
    const { runStep } = runner(bindings);
    const retry = await runStep(firstCall(runId, 'a'));
    expect(retry).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    const crashing = runner(bindings, {
      over: crashOnce('transitionStep', successWrite),
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

  it('runs duplicated copies of the first call once: one side effect, and the step ends with its result', async () => {
    const pack = createConformancePack();
    const ledger = counting(slow(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding, 200));
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'twice?' })]);
    const { runStep } = runner({ [CONFORMANCE_TARGETS.ledger]: ledger });

    const answers = await Promise.all([1, 2, 3].map(() => runStep(firstCall(runId, 'pay'))));

    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
    // A copy that found the call in progress answers a retry (its word is the decider's to take or leave); the one
    // that made it answers done. Following a retry makes no second call: it replays the recorded result.
    const retry: StepNext = { action: 'retry', attempt: 2, delaySeconds: 1 };
    for (const answer of answers) expect([DONE_1, retry]).toContainEqual(answer);
    const followed = answers.some((a) => a.action === 'retry')
      ? await runStep(afterBackoff(runId, 'pay', retry))
      : DONE_1;
    expect(followed.action).toBe('done');
    expect(ledger.calls).toBe(1);
    const last = (await attemptsOf(runId, 'pay')).at(-1);
    expect(last).toMatchObject({ outcome: 'succeeded', output: { entryId: pack.ledger.entries()[0]?.entryId } });
    expect(await stepOf(runId, 'pay')).toMatchObject({
      status: 'succeeded',
      output: last?.output,
      attempts: last?.attempt,
    });
  });
});
