/**
 * The embedded Executions adapter running the REAL synthesized run and step definitions, with scripted handlers in
 * place of the Lambdas: every path the design describes (plan → validate → start → wait → finalize; claim →
 * execute → verify → complete; retries through RecordFailure/Backoff; callback timeouts; Catch routes).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createLocalExecutions,
  type LocalExecutionInfo,
  type LocalExecutions,
  type LocalHandler,
} from '../../infra/local/local-executions.ts';
import type { AslDefinition } from '../../infra/local/synth.ts';
import { type ExtractedMachines, synthesizeStateMachines } from '../../infra/local/synth.ts';
import { isConflictError } from '../../shared/errors.ts';
import { runExecutionName, stepExecutionName } from '../../shared/ports/executions.ts';
import {
  describeExecutionsBehaviour,
  type ExecutionState,
  type ExecutionsHarness,
} from '../support/executions-behaviour.ts';

type Payload = Record<string, unknown> & { action?: string; taskToken?: string };
type Script = (payload: Payload) => unknown;

let machines: ExtractedMachines;
let executions: LocalExecutions | undefined;
let calls: { fn: string; payload: Payload }[];
let failures: { error: Error; execution: LocalExecutionInfo }[];

beforeAll(() => {
  machines = synthesizeStateMachines();
});
afterEach(() => {
  executions?.close();
  executions = undefined;
});

/** Handlers that log every call and answer from a script per function key (coordinator: per action). */
function boot(scripts: {
  Planner?: Script;
  Validator?: Script;
  StepExecutor?: Script;
  actions?: Record<string, Script>;
}) {
  calls = [];
  failures = [];
  const handler =
    (fn: string, script: (payload: Payload) => unknown): LocalHandler =>
    async (payload) => {
      calls.push({ fn, payload: payload as Payload });
      return script(payload as Payload);
    };
  const coordinatorDefaults: Record<string, Script> = {
    startRun: () => ({ deadlineSeconds: 300 }),
    awaitRun: () => ({}),
    claimStep: () => ({ outcome: 'claimed', kind: 'tool', attempt: 1, approvalTimeoutSeconds: 300 }),
    verifyStep: () => ({ verdict: 'pass' }),
    recordFailure: () => ({ decision: 'failed' }),
    requestApproval: () => ({ approvalId: 'ap-1' }),
  };
  const actions = { ...coordinatorDefaults, ...scripts.actions };
  executions = createLocalExecutions({
    definitions: { run: machines.run, step: machines.step },
    functionOf: machines.functionOf,
    backoffMs: 1,
    onError: (error, execution) => failures.push({ error, execution }),
    handlers: {
      Planner: handler('Planner', scripts.Planner ?? ((p) => ({ runId: p.runId }))),
      Validator: handler('Validator', scripts.Validator ?? (() => ({ valid: true, errors: [] }))),
      StepExecutor: handler('StepExecutor', scripts.StepExecutor ?? (() => ({ ok: true }))),
      Coordinator: handler('Coordinator', (p) => (actions[p.action ?? ''] ?? (() => ({})))(p)),
    },
  });
  return executions;
}

const trail = (): string[] => calls.map((c) => (c.fn === 'Coordinator' ? String(c.payload.action) : c.fn));
const callOf = (action: string, nth = 0): Payload => {
  const found = calls.filter((c) => c.payload.action === action || c.fn === action)[nth];
  if (!found) throw new Error(`no call ${action} #${nth} in ${trail().join(' → ')}`);
  return found.payload;
};
const statusOf = (ex: LocalExecutions, name: string): LocalExecutionInfo | undefined =>
  ex.list().find((info) => info.name === name);
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
    expect(callOf('awaitRun')).toEqual({ action: 'awaitRun', runId: 'r1', taskToken: token });

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
    expect(callOf('rejectPlan')).toEqual({ action: 'rejectPlan', runId: 'r2', errors });
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
  it('claims, executes, verifies and completes a tool step', async () => {
    const ex = boot({});

    const { executionId } = await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual(['claimStep', 'StepExecutor', 'verifyStep', 'completeStep']);
    expect(callOf('claimStep')).toEqual({ action: 'claimStep', ...STEP, executionId });
    expect(callOf('StepExecutor')).toEqual({ ...STEP, attempt: 1 });
    expect(callOf('verifyStep')).toEqual({ action: 'verifyStep', ...STEP, attempt: 1, decision: null });
    expect(callOf('completeStep')).toEqual({ action: 'completeStep', ...STEP, attempt: 1 });
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('ends at once when the claim is not granted', async () => {
    const ex = boot({ actions: { claimStep: () => ({ outcome: 'duplicate', kind: 'tool', attempt: 1 }) } });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual(['claimStep']);
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('retries through RecordFailure and Backoff with the next attempt, without sleeping the delay', async () => {
    const failure = { code: 'E_CAPABILITY', message: 'flaky', retryable: true };
    const ex = boot({
      StepExecutor: (p) => (p.attempt === 1 ? { ok: false, error: failure } : { ok: true }),
      actions: {
        recordFailure: (p) => ({ decision: 'retry', attempt: Number(p.attempt) + 1, delaySeconds: 30 }),
      },
    });
    const startedAt = Date.now();

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual([
      'claimStep',
      'StepExecutor',
      'recordFailure',
      'StepExecutor',
      'verifyStep',
      'completeStep',
    ]);
    expect(callOf('recordFailure')).toEqual({ action: 'recordFailure', ...STEP, attempt: 1, error: failure });
    expect(callOf('StepExecutor', 1)).toEqual({ ...STEP, attempt: 2 });
    expect(callOf('completeStep')).toMatchObject({ attempt: 2 });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });

  it('routes an executor crash by Catch to RecordFailure as a retryable E_EXECUTOR error', async () => {
    const ex = boot({
      StepExecutor: () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual(['claimStep', 'StepExecutor', 'recordFailure']);
    expect(callOf('recordFailure').error).toMatchObject({
      code: 'E_EXECUTOR',
      message: 'TypeError',
      retryable: true,
      details: { Error: 'TypeError' },
    });
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('records a failed verification with the verifier error', async () => {
    const error = { code: 'E_OUTPUT_SCHEMA', message: 'missing field', retryable: false };
    const ex = boot({ actions: { verifyStep: () => ({ verdict: 'fail', error }) } });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual(['claimStep', 'StepExecutor', 'verifyStep', 'recordFailure']);
    expect(callOf('recordFailure').error).toEqual(error);
  });

  it('gates a human step on approval, verifies the decision, sends a review back through verification', async () => {
    let verifications = 0;
    const ex = boot({
      actions: {
        claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 300 }),
        verifyStep: () => ({ verdict: ++verifications === 1 ? 'review' : 'pass' }),
      },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();
    const approval = callOf('requestApproval');
    expect(approval).toEqual({ action: 'requestApproval', ...STEP, kind: 'approval', taskToken: approval.taskToken });
    await ex.sendTaskSuccess(String(approval.taskToken), { decision: 'approve', by: 'ana' });
    await ex.idle();
    const review = callOf('requestApproval', 1);
    expect(review).toMatchObject({ kind: 'review' });
    await ex.sendTaskSuccess(String(review.taskToken), { decision: 'edit', output: { n: 2 } });
    await ex.idle();

    expect(trail()).toEqual([
      'claimStep',
      'requestApproval',
      'verifyStep',
      'requestApproval',
      'verifyStep',
      'completeStep',
    ]);
    expect(callOf('verifyStep', 0).decision).toEqual({ decision: 'approve', by: 'ana' });
    expect(callOf('verifyStep', 1).decision).toEqual({ decision: 'edit', output: { n: 2 } });
    expect(review.taskToken).not.toBe(approval.taskToken);
  });

  it('expires an unanswered approval through the timeout Catch and closes its token', async () => {
    const ex = boot({
      actions: { claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 1 }) },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();
    const token = String(callOf('requestApproval').taskToken);
    await waitFor(() => statusOf(ex, STEP_NAME)?.status !== 'RUNNING');

    expect(trail()).toEqual(['claimStep', 'requestApproval', 'expireApproval']);
    expect(callOf('expireApproval')).toEqual({ action: 'expireApproval', ...STEP, kind: 'approval' });
    const late = await ex.sendTaskSuccess(token, { decision: 'approve' }).catch((e: unknown) => e);
    expect(isConflictError(late)).toBe(true);
  });

  it('times a gate out even when its handler is still busy, and ignores what the handler does afterwards', async () => {
    const ex = boot({
      actions: {
        claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 1 }),
        requestApproval: async () => {
          await new Promise((resolve) => setTimeout(resolve, 1_300));
          throw new Error('too late to matter');
        },
      },
    });

    await ex.start('step', STEP_NAME, STEP);
    await waitFor(() => trail().includes('expireApproval'));
    await new Promise((resolve) => setTimeout(resolve, 400));

    expect(trail()).toEqual(['claimStep', 'requestApproval', 'expireApproval']);
    expect(statusOf(ex, STEP_NAME)?.status).toBe('SUCCEEDED');
  });

  it('fails the execution with an uncatchable States.Runtime when a gate timeout is not a positive integer', async () => {
    const ex = boot({
      actions: { claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 0 }) },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(trail()).toEqual(['claimStep']);
    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'FAILED', error: { error: 'States.Runtime' } });
  });

  it('turns a SendTaskFailure on a gate into a permanent E_GATE failure', async () => {
    const ex = boot({
      actions: { claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 300 }) },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();
    await ex.sendTaskFailure(String(callOf('requestApproval').taskToken), 'StepCancelled', 'run cancelled');
    await ex.idle();

    expect(trail()).toEqual(['claimStep', 'requestApproval', 'recordFailure']);
    expect(callOf('recordFailure').error).toMatchObject({ code: 'E_GATE', message: 'StepCancelled', retryable: false });
  });

  it('stops a waiting execution: ABORTED, no further state runs, its token closed', async () => {
    const ex = boot({
      actions: { claimStep: () => ({ outcome: 'claimed', kind: 'human', attempt: 1, approvalTimeoutSeconds: 300 }) },
    });

    const { executionId } = await ex.start('step', STEP_NAME, STEP);
    await ex.idle();
    await ex.stop(executionId, 'RunCancelled', 'cancelled');
    await ex.idle();
    await new Promise((resolve) => setTimeout(resolve, 20));

    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'ABORTED', error: { error: 'RunCancelled' } });
    expect(trail()).toEqual(['claimStep', 'requestApproval']);
    const late = await ex.sendTaskSuccess(String(callOf('requestApproval').taskToken), {}).catch((e: unknown) => e);
    expect(isConflictError(late)).toBe(true);
  });

  it('fails the execution and reports it when an uncaught handler error escapes', async () => {
    const ex = boot({
      actions: {
        claimStep: () => {
          throw Object.assign(new Error('store unavailable'), { name: 'StoreUnavailable' });
        },
      },
    });

    await ex.start('step', STEP_NAME, STEP);
    await ex.idle();

    expect(statusOf(ex, STEP_NAME)).toMatchObject({ status: 'FAILED', error: { error: 'StoreUnavailable' } });
    expect(failures.map((f) => f.error.name)).toEqual(['StoreUnavailable']);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One callback Task that waits as long as the input says: the port's behaviour without the machines' logic. */
const WAITER_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:Waiter';
const waitingMachine: AslDefinition = {
  StartAt: 'Wait',
  States: {
    Wait: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: {
        FunctionName: WAITER_ARN,
        Payload: { 'executionId.$': '$$.Execution.Id', 'taskToken.$': '$$.Task.Token' },
      },
      TimeoutSecondsPath: '$.timeoutSeconds',
      End: true,
    },
  },
};

function localHarness(): ExecutionsHarness {
  const tokens = new Map<string, string>();
  const ex = createLocalExecutions({
    definitions: { run: waitingMachine, step: waitingMachine },
    functionOf: (resource) => (resource === WAITER_ARN ? 'Waiter' : undefined),
    handlers: {
      Waiter: async (payload) => {
        const { executionId, taskToken } = payload as { executionId: string; taskToken: string };
        tokens.set(executionId, taskToken);
        return {};
      },
    },
    onError: () => {},
  });
  const state = (executionId: string): ExecutionState | undefined => {
    const info = ex.list().find((entry) => entry.executionId === executionId);
    if (!info) return undefined;
    if (info.status === 'RUNNING') return { status: 'RUNNING' };
    if (info.status === 'SUCCEEDED') return { status: 'SUCCEEDED', output: info.output };
    return { status: info.status, error: info.error?.error ?? '', cause: info.error?.cause ?? '' };
  };
  return {
    executions: ex,
    async startWaiting(machine, name, input) {
      const { executionId } = await ex.start(machine, name, input);
      await ex.idle();
      const token = tokens.get(executionId);
      if (token === undefined) throw new Error(`execution ${executionId} is not waiting on a token`);
      return { executionId, token };
    },
    count: (machine, name) => ex.list().filter((info) => info.machine === machine && info.name === name).length,
    state,
    settle: () => ex.idle(),
    async expire(_token, executionId) {
      await waitFor(() => state(executionId)?.status !== 'RUNNING');
    },
    async stop() {
      ex.close();
    },
  };
}

describeExecutionsBehaviour('embedded (aws-local-stepfunctions)', async () => localHarness());
