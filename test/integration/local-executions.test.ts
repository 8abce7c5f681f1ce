/**
 * The embedded Executions adapter running the REAL synthesized run and step definitions, with scripted handlers in
 * place of the Lambdas: every path the design describes (plan → validate → start → wait → finalize; RunStep → Route
 * → done, a retry through Backoff, a person's decision through AwaitDecision; callback timeouts; Retry and Catch
 * routes into RecordFailure). The harness is test/support/scripted-executions.ts; the port's behaviour on this
 * adapter is in local-executions-port.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { isConflictError } from '../../shared/errors.ts';
import { runExecutionName, stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';
import {
  boot,
  callOf,
  failures,
  type Script,
  statusOf,
  stepStates,
  trail,
  useScriptedExecutions,
  waitFor,
} from '../support/scripted-executions.ts';

useScriptedExecutions();

const STEP = { runId: 'r1', stepId: 'collect', generation: 1 };
const STEP_NAME = stepExecutionName('r1', 'collect', 1);

describe('local executions on the synthesized run machine', () => {
  it('plans, validates, starts, parks on AwaitRunFinished and finalizes once the token is answered', async () => {
    const ex = boot({});
    await ex.start('run', runExecutionName('r1'), { runId: 'r1' });
    await ex.idle();

    expect(trail()).toEqual(['Planner', 'Validator', 'startRun', 'awaitRun']);
    expect(statusOf(ex, 'run-r1')?.status).toBe('RUNNING');
    const token = String(callOf('awaitRun').taskToken);
    // Each word to the run's decider names the execution it comes from ($$.Execution.Name).
    expect(callOf('awaitRun')).toEqual({ action: 'awaitRun', runId: 'r1', taskToken: token, execution: 'run-r1' });

    await ex.sendTaskSuccess(token, { finished: true });
    await ex.idle();

    expect(trail().at(-1)).toBe('finalizeRun');
    expect(callOf('finalizeRun')).toEqual({
      action: 'finalizeRun',
      runId: 'r1',
      timedOut: null,
      error: null,
      execution: 'run-r1',
    });
    expect(statusOf(ex, 'run-r1')).toMatchObject({ status: 'SUCCEEDED', output: { awaited: { finished: true } } });
  });

  it('rejects an invalid plan with its errors and starts nothing', async () => {
    const errors = [{ code: 'E_CYCLE', path: '/steps/1', message: 'cycle a → b → a' }];
    const ex = boot({ Validator: () => ({ valid: false, errors }) });

    await ex.start('run', 'run-r2', { runId: 'r2' });
    await ex.idle();

    expect(trail()).toEqual(['Planner', 'Validator', 'rejectPlan']);
    expect(callOf('rejectPlan')).toEqual({ action: 'rejectPlan', runId: 'r2', errors, execution: 'run-r2' });
    expect(statusOf(ex, 'run-r2')?.status).toBe('SUCCEEDED');
  });

  it('routes a planner error by Catch to FailRun with the error name and a Lambda-shaped cause', async () => {
    const ex = boot({
      Planner: () => {
        throw Object.assign(new Error('the model answered nonsense'), { name: 'PlannerError' });
      },
    });

    await ex.start('run', 'run-r3', { runId: 'r3' });
    await ex.idle();

    expect(trail()).toEqual(['Planner', 'failRun']);
    const { error } = callOf('failRun') as { error: { Error: string; Cause: string } };
    expect(error.Error).toBe('PlannerError');
    expect(JSON.parse(error.Cause)).toEqual({ errorType: 'PlannerError', errorMessage: 'the model answered nonsense' });
  });

  it('finalizes with timedOut when the run deadline passes, and retires the waiter token', async () => {
    const ex = boot({ actions: { startRun: () => ({ deadlineSeconds: 1 }) } });

    await ex.start('run', 'run-r4', { runId: 'r4' });
    await ex.idle();
    const token = String(callOf('awaitRun').taskToken);
    await waitFor(() => trail().includes('finalizeRun'));

    expect(callOf('finalizeRun')).toMatchObject({ runId: 'r4', timedOut: { Error: 'States.Timeout' }, error: null });
    const late = await ex.sendTaskSuccess(token, { finished: true }).catch((e: unknown) => e);
    expect(isConflictError(late)).toBe(true);
  });

  it('resumes a reopened run straight to the wait and finalizes it under the new execution name', async () => {
    const ex = boot({});
    const name = runExecutionName('r6-o1');

    await ex.start('run', name, { runId: 'r6', resume: true, started: { deadlineSeconds: 300 } });
    await ex.idle();

    expect(trail()).toEqual(['awaitRun']);
    await ex.sendTaskSuccess(String(callOf('awaitRun').taskToken), { finished: true });
    await ex.idle();
    expect(trail()).toEqual(['awaitRun', 'finalizeRun']);
    expect(callOf('finalizeRun')).toEqual({
      action: 'finalizeRun',
      runId: 'r6',
      timedOut: null,
      error: null,
      execution: name,
    });
    expect(statusOf(ex, name)?.status).toBe('SUCCEEDED');
  });

  it('gives a resumed run its new deadline: the wait times out into FinalizeRun', async () => {
    const ex = boot({});

    await ex.start('run', 'run-r7-o2', { runId: 'r7', resume: true, started: { deadlineSeconds: 1 } });
    await waitFor(() => trail().includes('finalizeRun'));

    expect(trail()).toEqual(['awaitRun', 'finalizeRun']);
    expect(callOf('finalizeRun')).toMatchObject({ runId: 'r7', timedOut: { Error: 'States.Timeout' } });
  });

  it('plans as usual when resume is absent or false', async () => {
    const ex = boot({});

    await ex.start('run', 'run-r8', { runId: 'r8', resume: false });
    await ex.idle();

    expect(trail()).toEqual(['Planner', 'Validator', 'startRun', 'awaitRun']);
  });

  it('returns started:false for a duplicate start and runs the machine once', async () => {
    const ex = boot({});

    const first = await ex.start('run', 'run-r5', { runId: 'r5' });
    const second = await ex.start('run', 'run-r5', { runId: 'r5' });
    await ex.idle();

    expect(first.started).toBe(true);
    expect(second).toEqual({ executionId: first.executionId, started: false });
    expect(trail().filter((fn) => fn === 'Planner')).toHaveLength(1);
  });
});

describe('local executions on the synthesized step machine', () => {
  /** What the decider starts a step with besides its ids: every Task of the step's path is given it. */
  const BRIEF = {
    revision: 1,
    step: { id: 'collect', title: 'Collect', target: 'tool:t', dependsOn: [] },
    upstream: [],
    outputs: [],
  };
  const INPUT = stepExecutionInput(STEP, BRIEF);
  const RUN_STEP = (executionId: string, previous: unknown = null, decision: unknown = null) => ({
    ...STEP,
    executionId,
    previous,
    decision,
    started: INPUT,
  });
  const awaiting = (kind: 'approval' | 'review', attempt = 1, timeoutSeconds = 300) => ({
    action: 'await',
    attempt,
    kind,
    timeoutSeconds,
  });
  /** RunStep answers from a list, one per call (the last one repeats). */
  const answers =
    (...list: unknown[]): Script =>
    () =>
      list.length > 1 ? list.shift() : list[0];

  it('runs a step in one RunStep call: exactly RunStep → Route → StepDone', async () => {
    const ex = boot({});

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor']);
    expect(callOf('StepExecutor')).toEqual(RUN_STEP(executionId));
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual(['RunStep', 'Route', 'StepDone']);
    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'SUCCEEDED', output: { next: { action: 'done' } } });
  });

  it('waits out a retry in Backoff (compressed) and gives RunStep the retry answer as previous', async () => {
    const retry = { action: 'retry', attempt: 2, delaySeconds: 30 };
    const ex = boot({ StepExecutor: answers(retry, { action: 'done', attempt: 2 }) });
    const startedAt = Date.now();

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor', 'StepExecutor']);
    expect(callOf('StepExecutor', 0)).toEqual(RUN_STEP(executionId));
    expect(callOf('StepExecutor', 1)).toEqual(RUN_STEP(executionId, retry));
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual(['RunStep', 'Route', 'Backoff', 'RunStep', 'Route', 'StepDone']);
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });

  it('parks on the task token of an await, gives RunStep the decision, and asks again for a review', async () => {
    const ex = boot({
      StepExecutor: answers(awaiting('approval'), awaiting('review'), { action: 'done', attempt: 1 }),
    });

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();
    const approval = callOf('requestApproval');
    expect(approval).toEqual({
      action: 'requestApproval',
      ...STEP,
      kind: 'approval',
      taskToken: approval.taskToken,
      execution: STEP_NAME,
      started: INPUT,
    });
    expect(statusOf(ex, STEP_NAME)?.status).toBe('RUNNING');
    expect(trail()).toEqual(['StepExecutor', 'requestApproval']);

    await ex.sendTaskSuccess(String(approval.taskToken), { decision: 'approve', by: 'ana' });
    await ex.idle();
    const review = callOf('requestApproval', 1);
    expect(review).toMatchObject({ kind: 'review' });
    expect(review.taskToken).not.toBe(approval.taskToken);
    await ex.sendTaskSuccess(String(review.taskToken), { decision: 'edit', output: { n: 2 } });
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor', 'requestApproval', 'StepExecutor', 'requestApproval', 'StepExecutor']);
    expect(callOf('StepExecutor', 1)).toEqual(
      RUN_STEP(executionId, awaiting('approval'), { decision: 'approve', by: 'ana' }),
    );
    expect(callOf('StepExecutor', 2)).toEqual(
      RUN_STEP(executionId, awaiting('review'), { decision: 'edit', output: { n: 2 } }),
    );
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual([
      'RunStep',
      'Route',
      'AwaitDecision',
      'RunStep',
      'Route',
      'AwaitDecision',
      'RunStep',
      'Route',
      'StepDone',
    ]);
  });

  it('expires an unanswered decision through DecisionExpired and closes its token', async () => {
    const ex = boot({ StepExecutor: answers(awaiting('approval', 1, 1)) });

    await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();
    const token = String(callOf('requestApproval').taskToken);
    await waitFor(() => statusOf(ex, STEP_NAME)?.status !== 'RUNNING');

    expect(trail()).toEqual(['StepExecutor', 'requestApproval', 'expireApproval']);
    expect(callOf('expireApproval')).toEqual({
      action: 'expireApproval',
      ...STEP,
      kind: 'approval',
      execution: STEP_NAME,
    });
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual(['RunStep', 'Route', 'AwaitDecision', 'DecisionExpired', 'StepDone']);
    const late = await ex.sendTaskSuccess(token, { decision: 'approve' }).catch((e: unknown) => e);
    expect(isConflictError(late)).toBe(true);
  });

  it('times a wait out even when its handler is still busy, and ignores what the handler does afterwards', async () => {
    const ex = boot({
      StepExecutor: answers(awaiting('approval', 1, 1)),
      actions: {
        requestApproval: async () => {
          await new Promise((resolve) => setTimeout(resolve, 1_300));
          throw new Error('too late to matter');
        },
      },
    });

    await ex.start('step', STEP_NAME, INPUT);
    await waitFor(() => trail().includes('expireApproval'));
    await new Promise((resolve) => setTimeout(resolve, 400));

    expect(trail()).toEqual(['StepExecutor', 'requestApproval', 'expireApproval']);
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('turns a SendTaskFailure on a wait into GateFailed → RecordFailure: a permanent E_GATE of the attempt', async () => {
    const ex = boot({
      StepExecutor: answers(awaiting('review', 2)),
      actions: { recordFailure: () => ({ action: 'done', attempt: 2 }) },
    });

    await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();
    await ex.sendTaskFailure(String(callOf('requestApproval').taskToken), 'StepCancelled', 'run cancelled');
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor', 'requestApproval', 'recordFailure']);
    expect(callOf('recordFailure')).toEqual({
      action: 'recordFailure',
      execution: STEP_NAME,
      ...STEP,
      attempt: 2,
      // RunStep's entry the failure interrupted: a repeat of RecordFailure names the same attempt.
      previous: { action: 'await', attempt: 2, kind: 'review', timeoutSeconds: 300 },
      started: INPUT,
      error: {
        code: 'E_GATE',
        message: 'StepCancelled',
        retryable: false,
        details: { Error: 'StepCancelled', Cause: 'run cancelled' },
      },
    });
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual([
      'RunStep',
      'Route',
      'AwaitDecision',
      'GateFailed',
      'RecordFailure',
      'Route',
      'StepDone',
    ]);
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('retries RunStep on a Lambda throttle inside the Task: the same call again, no failure recorded', async () => {
    let calls = 0;
    const ex = boot({
      StepExecutor: () => {
        calls++;
        if (calls === 1) throw Object.assign(new Error('Rate exceeded'), { name: 'Lambda.TooManyRequestsException' });
        return { action: 'done', attempt: 1 };
      },
    });

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await waitFor(() => statusOf(ex, STEP_NAME)?.status !== 'RUNNING');

    expect(trail()).toEqual(['StepExecutor', 'StepExecutor']);
    expect(callOf('StepExecutor', 1)).toEqual(callOf('StepExecutor', 0));
    expect(callOf('StepExecutor', 1)).toEqual(RUN_STEP(executionId));
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual(['RunStep', 'Route', 'StepDone']);
  });

  it('routes a RunStep that fails for good through ExecutorFailed to RecordFailure: attempt null, retryable E_EXECUTOR', async () => {
    const next = { action: 'retry', attempt: 2, delaySeconds: 5 };
    let calls = 0;
    const ex = boot({
      StepExecutor: () => {
        calls++;
        if (calls === 1) throw new TypeError('cannot read properties of undefined');
        return { action: 'done', attempt: 2 };
      },
      actions: { recordFailure: () => next },
    });

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor', 'recordFailure', 'StepExecutor']);
    const recorded = callOf('recordFailure');
    expect(recorded).toEqual({
      action: 'recordFailure',
      execution: STEP_NAME,
      ...STEP,
      attempt: null,
      previous: null,
      started: INPUT,
      error: {
        code: 'E_EXECUTOR',
        message: 'TypeError',
        retryable: true,
        details: { Error: 'TypeError', Cause: expect.any(String) },
      },
    });
    expect(JSON.parse(String((recorded.error as { details: { Cause: string } }).details.Cause))).toEqual({
      errorType: 'TypeError',
      errorMessage: 'cannot read properties of undefined',
    });
    // RecordFailure answers like RunStep: its retry goes through Backoff to the next RunStep.
    expect(callOf('StepExecutor', 1)).toEqual(RUN_STEP(executionId, next));
    await waitFor(() => stepStates.includes('StepDone'));
    expect(stepStates).toEqual([
      'RunStep',
      'ExecutorFailed',
      'RecordFailure',
      'Route',
      'Backoff',
      'RunStep',
      'Route',
      'StepDone',
    ]);
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('stops a waiting execution: ABORTED, no further state runs, its token closed', async () => {
    const ex = boot({ StepExecutor: answers(awaiting('approval')) });

    const { executionId } = await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();
    await ex.stop(executionId, 'RunCancelled', 'cancelled');
    await ex.idle();
    await new Promise((resolve) => setTimeout(resolve, 20));

    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'ABORTED', error: { error: 'RunCancelled' } });
    expect(trail()).toEqual(['StepExecutor', 'requestApproval']);
    const late = await ex.sendTaskSuccess(String(callOf('requestApproval').taskToken), {}).catch((e: unknown) => e);
    expect(isConflictError(late)).toBe(true);
  });

  it.each([0, 1.5])(
    'fails the execution with an uncatchable States.Runtime when a wait timeout is %s (not a positive integer)',
    async (timeoutSeconds) => {
      const ex = boot({ StepExecutor: answers(awaiting('approval', 1, timeoutSeconds)) });

      await ex.start('step', STEP_NAME, INPUT);
      await ex.idle();

      expect(trail()).toEqual(['StepExecutor']);
      expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'FAILED', error: { error: 'States.Runtime' } });
    },
  );

  it('fails the execution and reports it when RecordFailure throws an error nothing catches', async () => {
    const ex = boot({
      StepExecutor: () => {
        throw new TypeError('cannot read properties of undefined');
      },
      actions: {
        recordFailure: () => {
          throw Object.assign(new Error('store unavailable'), { name: 'StoreUnavailable' });
        },
      },
    });

    await ex.start('step', STEP_NAME, INPUT);
    await ex.idle();

    expect(trail()).toEqual(['StepExecutor', 'recordFailure']);
    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'FAILED', error: { error: 'StoreUnavailable' } });
    expect(failures.map((f) => f.error.name)).toEqual(['StoreUnavailable']);
  });
});
