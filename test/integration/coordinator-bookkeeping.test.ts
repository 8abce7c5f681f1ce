/**
 * How a run comes to its end, and what a crash or a lost answer on the way does, through the real state machines:
 * the run is decided when its last step settles (not at its deadline, and without reading the run as a whole after
 * every step), a dependent is started exactly once, and a store call that fails or an answer that is lost inside
 * RunStep or RecordFailure is repeated by Step Functions (Retry) or recorded as a failed attempt (Catch), and the run
 * still ends as it should.
 */
import { describe, expect, it } from 'vitest';
import { type Executions, stepExecutionName } from '../../shared/ports/executions.ts';
import { useEngineStack } from '../support/engine-stack.ts';
import { fail, flaky, held } from '../support/scripted-pack.ts';
import type { Call } from '../support/stack-faults.ts';

const engine = useEngineStack();

/** A run's objective that its store calls can be matched by before its id is known. */
const objectiveOf = (name: string) => `${name} ${Date.now()} ${Math.random()}`;

/**
 * The execution's write of a first attempt that succeeded: its record and output on the step's item (RunStep's one
 * write before it tells the decider; the step's status is the decider's to change).
 */
const successWritten =
  (objective: string, stepId: string) =>
  (call: Call): boolean =>
    call.runId === engine().faults.runIdFor(objective) &&
    call.args[1] === stepId &&
    (call.args[3] as { attemptRecord?: unknown } | undefined)?.attemptRecord !== undefined;

/** RunStep's first read of its step (with its run), before it evaluates the input or calls anything. */
const stepRead =
  (objective: string, stepId: string) =>
  (call: Call): boolean =>
    call.runId === engine().faults.runIdFor(objective) && call.args[1] === stepId;

const submitAs = (objective: string, steps: Parameters<ReturnType<typeof engine>['submit']>[0]) =>
  engine().stack.startRun({ plan: { schemaVersion: 1, revision: 1, objective, steps } });

/**
 * The decider's start of a step execution named `name` fails once, after the batch that decided it was committed and
 * its records written (the decider's process died before its effects): resolves when it failed.
 */
function failStepStartOnce(executions: Executions, name: string): Promise<void> {
  const start = executions.start;
  return new Promise((resolve) => {
    executions.start = async (machine, started, input) => {
      if (machine !== 'step' || started !== name) return start.call(executions, machine, started, input);
      executions.start = start;
      resolve();
      const error = new Error(`injected: the start of ${name} was lost`);
      error.name = 'ThrottlingException';
      throw error;
    };
  });
}

describe('completion bookkeeping', () => {
  it('decides a run when its last step settles, without reading its steps as a whole after each step', async () => {
    const { step, runPlan, faults } = engine();
    const fan = Array.from({ length: 12 }, (_, i) => step(`leaf${i}`, ['root']));
    const { runId, run, execution } = await runPlan([step('root'), ...fan]);
    expect(run.status).toBe('complete');
    // The run machine's wait was answered by the last step, long before the deadline.
    expect(execution?.status).toBe('SUCCEEDED');
    expect(run.terminal?.reason).toBe('completed');
    expect(faults.calls('listSteps', runId)).toBeLessThanOrEqual(2);
  });

  it('counts a blocked downstream as settled, so a failed run finishes without waiting for its deadline', async () => {
    const { step, runPlan } = engine();
    const { run, steps, execution } = await runPlan([
      step('a', [], { script: fail('E_BOOM', false) }),
      step('b', ['a']),
      step('c', ['b']),
      step('d'),
    ]);
    expect(execution?.status).toBe('SUCCEEDED');
    expect(run.status).toBe('failed');
    expect(run.terminal?.evidence).toMatchObject({ rootCauses: ['a'] });
    expect(['b', 'c', 'd'].map((id) => steps.get(id)?.status)).toEqual(['blocked', 'blocked', 'succeeded']);
  });

  it('readies a dependent that waits for one step and starts it exactly once, after that step', async () => {
    const { step, runPlan, stepExecutions, pack, published } = engine();
    const { runId, run, steps } = await runPlan([step('a'), step('b', ['a'])]);
    expect(run.status).toBe('complete');
    expect(steps.get('b')).toMatchObject({ status: 'succeeded', remaining: 0, released: ['a'] });
    expect(stepExecutions(runId, 'b')).toHaveLength(1);
    expect(pack.calls(runId, 'b')).toHaveLength(1);
    expect(published('StepStarted', runId, 'b')).toHaveLength(1);
    expect(String(steps.get('b')?.startedAt) >= String(steps.get('a')?.finishedAt)).toBe(true);
  });
});

describe('a throttle or a crash inside RunStep', () => {
  it('retries a throttled RunStep without counting an attempt', async () => {
    const { faults, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('throttled');
    // RunStep's first read is throttled: Step Functions retries RunStep, nothing was evaluated or called yet.
    const throttle = faults.throwOn({
      method: 'getStepWithRun',
      when: 'before',
      name: 'ThrottlingException',
      match: stepRead(objective, 'a'),
    });
    const runId = await submitAs(objective, [step('a')]);
    await throttle.fired;
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(run.status).toBe('complete');
    expect(steps.get('a')).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(pack.calls(runId, 'a').map((c) => c.attempt)).toEqual([1]);
    expect(published('StepRetrying', runId)).toHaveLength(0);
  });

  it('finishes the run when RunStep is repeated after the success of a step was written', async () => {
    const { faults, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('lost after success');
    // `a`'s success is written, then its RunStep fails before it tells the decider (a throttle: Step Functions
    // retries it, and the repeat finds the attempt recorded).
    const crash = faults.throwOn({
      method: 'transitionStep',
      when: 'after',
      match: successWritten(objective, 'a'),
    });
    const runId = await submitAs(objective, [step('a'), step('b')]);
    await crash.fired;
    await quiet();
    const { run, steps, execution } = await outcome(runId);
    expect(steps.get('a')?.status).toBe('succeeded');
    expect(run.status).toBe('complete');
    expect(execution?.status).toBe('SUCCEEDED');
    expect(published('StepSucceeded', runId, 'a')).toHaveLength(1);
    expect(published('RunFinished', runId)).toHaveLength(1);
    expect(pack.calls(runId, 'a')).toHaveLength(1);
  });

  it('starts a dependent whose edge was counted when RunStep is repeated before starting it', async () => {
    const { stack, quiet, outcome, step, pack, stepExecutions } = engine();
    const objective = objectiveOf('lost after release');
    // The decider's batch that counts a's end and readies b is committed and written, then the start of b's
    // execution is throttled: the shell hands it back to the run's decider, whose timer starts it again a moment later.
    const slow = held();
    const runId = await submitAs(objective, [step('a', [], { script: slow.script }), step('b', ['a'])]);
    const crash = failStepStartOnce(stack.executions, stepExecutionName(runId, 'b', 1));
    slow.release();
    await crash;
    for (let polls = 0; (await outcome(runId)).run.status !== 'complete' && polls < 400; polls++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(steps.get('b')).toMatchObject({ status: 'succeeded', released: ['a'], remaining: 0 });
    expect(stepExecutions(runId, 'b')).toHaveLength(1);
    expect(pack.calls(runId, 'b')).toHaveLength(1);
    expect(run.status).toBe('complete');
  });

  it('keeps a success that RunStep wrote before it crashed for good (Catch → RecordFailure), and finishes the run', async () => {
    const { faults, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('crash after success');
    // Not a throttle: the Task fails after the success was written, before the decider was told; RecordFailure
    // finds the attempt recorded.
    const crash = faults.throwOn({
      method: 'transitionStep',
      when: 'after',
      name: 'Sandbox.Timedout',
      match: successWritten(objective, 'a'),
    });
    const runId = await submitAs(objective, [step('a'), step('b', ['a'])]);
    await crash.fired;
    await quiet();
    const { run, steps, execution } = await outcome(runId);
    expect(steps.get('a')).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(published('StepFailed', runId, 'a')).toHaveLength(0);
    expect(steps.get('b')?.status).toBe('succeeded');
    expect(pack.calls(runId, 'b')).toHaveLength(1);
    expect(run.status).toBe('complete');
    expect(execution?.status).toBe('SUCCEEDED');
  });

  it('records a crash before the call as a failed attempt and runs the next one', async () => {
    const { faults, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('crash before the call');
    // RunStep dies right after it read its step, before the call, with an error Step Functions does not retry.
    const crash = faults.throwOn({
      method: 'getStepWithRun',
      when: 'after',
      name: 'Error',
      match: stepRead(objective, 'a'),
    });
    const runId = await submitAs(objective, [step('a', [], { maxRetries: 1 })]);
    await crash.fired;
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(
      published('StepRetrying', runId, 'a').map((e) => [e.detail.attempt, (e.detail.error as { code: string }).code]),
    ).toEqual([[2, 'E_EXECUTOR']]);
    expect(steps.get('a')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(pack.calls(runId, 'a').map((c) => c.attempt)).toEqual([2]);
    expect(run.status).toBe('complete');
  });
});

describe('an answer lost on the way back', () => {
  it('repeats a RecordFailure whose answer was lost with the same decision: one retry, one next attempt', async () => {
    const { faults, handlers, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('lost record');
    // RunStep dies before the call (as above); RecordFailure records the failed attempt and its answer is lost.
    faults.throwOn({
      method: 'getStepWithRun',
      when: 'after',
      name: 'Error',
      match: stepRead(objective, 'a'),
    });
    let lostAnswer: unknown;
    void handlers
      .loseAnswer({
        key: 'Coordinator',
        match: (p) => p.action === 'recordFailure' && p.runId === faults.runIdFor(objective),
      })
      .then((answer) => {
        lostAnswer = answer;
      });
    const runId = await submitAs(objective, [step('a', [], { maxRetries: 2 })]);
    await quiet();
    const { run, steps } = await outcome(runId);
    // The lost answer was the decision to run attempt 2; its repeat answered the same.
    expect(lostAnswer).toMatchObject({ attempt: 2 });
    expect(
      handlers.invocations('Coordinator').filter((p) => p.action === 'recordFailure' && p.runId === runId),
    ).toHaveLength(2);
    expect(published('StepRetrying', runId, 'a')).toHaveLength(1);
    expect(steps.get('a')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(pack.calls(runId, 'a').map((c) => c.attempt)).toEqual([2]);
    expect(run.status).toBe('complete');
  });

  it('repeats a RunStep whose retry decision was lost without recording the failure twice', async () => {
    const { faults, handlers, quiet, outcome, step, pack, published } = engine();
    const objective = objectiveOf('lost retry');
    const lost = handlers.loseAnswer({
      key: 'StepExecutor',
      match: (p) => p.runId === faults.runIdFor(objective) && p.previous === null,
    });
    const runId = await submitAs(objective, [step('a', [], { maxRetries: 2, script: flaky(1) })]);
    expect(await lost).toMatchObject({ action: 'retry', attempt: 2 });
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(published('StepRetrying', runId, 'a')).toHaveLength(1);
    expect(pack.calls(runId, 'a').map((c) => c.attempt)).toEqual([1, 2]);
    expect(steps.get('a')).toMatchObject({ status: 'succeeded', attempts: 2, output: { attempt: 2 } });
    expect(run.status).toBe('complete');
  });

  it('repeats a RunStep whose completion was lost as a no-op: one success, the dependent started once', async () => {
    const { faults, handlers, quiet, outcome, step, pack, published, stepExecutions } = engine();
    const objective = objectiveOf('lost completion');
    const lost = handlers.loseAnswer({
      key: 'StepExecutor',
      match: (p) => p.runId === faults.runIdFor(objective) && p.stepId === 'parent',
    });
    const runId = await submitAs(objective, [step('parent'), step('child', ['parent'])]);
    expect(await lost).toMatchObject({ action: 'done' });
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(handlers.invocations('StepExecutor').filter((p) => p.runId === runId && p.stepId === 'parent')).toHaveLength(
      2,
    );
    expect(published('StepSucceeded', runId, 'parent')).toHaveLength(1);
    expect(pack.calls(runId, 'parent')).toHaveLength(1);
    expect(stepExecutions(runId, 'child')).toHaveLength(1);
    expect(pack.calls(runId, 'child')).toHaveLength(1);
    expect(steps.get('parent')).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(run.status).toBe('complete');
  });
});
