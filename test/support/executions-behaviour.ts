/**
 * The behaviour every Executions adapter must show. A harness can start an execution that parks on a task token
 * (as the run and step machines do) and can report what became of it: the embedded adapter runs a one-state ASL,
 * the Step Functions adapter talks to an in-memory fake behind aws-sdk-client-mock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConflictError } from '../../shared/errors.ts';
import type { Executions, MachineName } from '../../shared/ports/executions.ts';

export type ExecutionState =
  | { readonly status: 'RUNNING' }
  | { readonly status: 'SUCCEEDED'; readonly output: unknown }
  | { readonly status: 'FAILED' | 'ABORTED'; readonly error: string; readonly cause: string };

export interface ExecutionsHarness {
  readonly executions: Executions;
  /** Starts `name` on `machine` with `input` and resolves with the token its callback Task waits on. */
  startWaiting(
    machine: MachineName,
    name: string,
    input: Record<string, unknown>,
  ): Promise<{ executionId: string; token: string }>;
  /** How many executions carry this name on this machine. */
  count(machine: MachineName, name: string): number;
  state(executionId: string): ExecutionState | undefined;
  /** Resolves once every execution that can move on without outside input has done so. */
  settle(): Promise<void>;
  /** Lets the task waiting on `token` run out of time and waits until its execution has ended. */
  expire(token: string, executionId: string): Promise<void>;
  stop(): Promise<void>;
}

/** What the waiting task sees as its timeout: long enough never to fire unless a test expires it. */
export const WAIT_SECONDS = 300;

export function describeExecutionsBehaviour(label: string, start: () => Promise<ExecutionsHarness>): void {
  describe(`Executions behaviour: ${label}`, () => {
    let harness: ExecutionsHarness;
    let seq = 0;
    const fresh = (): string => `${label.replace(/[^A-Za-z0-9]/g, '')}-e${++seq}`;
    const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
      promise.then(
        () => undefined,
        (error: unknown) => error,
      );

    beforeAll(async () => {
      harness = await start();
    });
    afterAll(async () => {
      await harness.stop();
    });

    it('starts an execution under its name and reports it started', async () => {
      const name = fresh();
      const result = await harness.executions.start('step', name, { timeoutSeconds: WAIT_SECONDS });

      expect(result.started).toBe(true);
      expect(result.executionId).toContain(name);
      expect(harness.count('step', name)).toBe(1);
      expect(harness.state(result.executionId)?.status).toBe('RUNNING');
    });

    it('never starts a second execution for a name that is taken, and names the first one', async () => {
      const name = fresh();
      const first = await harness.executions.start('step', name, { timeoutSeconds: WAIT_SECONDS });

      const again = await harness.executions.start('step', name, { timeoutSeconds: WAIT_SECONDS });
      const otherInput = await harness.executions.start('step', name, { timeoutSeconds: WAIT_SECONDS, x: 1 });

      expect(again.executionId).toBe(first.executionId);
      expect(otherInput).toEqual({ executionId: first.executionId, started: false });
      expect(harness.count('step', name)).toBe(1);
    });

    it('reports started:false for the name of an execution that already finished', async () => {
      const name = fresh();
      const { executionId, token } = await harness.startWaiting('run', name, { timeoutSeconds: WAIT_SECONDS });
      await harness.executions.sendTaskSuccess(token, { finished: true });
      await harness.settle();

      const again = await harness.executions.start('run', name, { timeoutSeconds: WAIT_SECONDS });

      expect(again).toEqual({ executionId, started: false });
      expect(harness.count('run', name)).toBe(1);
    });

    it('keeps execution names apart per machine', async () => {
      const name = fresh();
      const run = await harness.executions.start('run', name, { timeoutSeconds: WAIT_SECONDS });
      const step = await harness.executions.start('step', name, { timeoutSeconds: WAIT_SECONDS });

      expect(run.started && step.started).toBe(true);
      expect(run.executionId).not.toBe(step.executionId);
    });

    it('delivers a SendTaskSuccess output to the waiting task, which then completes', async () => {
      const { executionId, token } = await harness.startWaiting('run', fresh(), { timeoutSeconds: WAIT_SECONDS });

      await harness.executions.sendTaskSuccess(token, { finished: true, note: 'żółw' });
      await harness.settle();

      expect(harness.state(executionId)).toEqual({ status: 'SUCCEEDED', output: { finished: true, note: 'żółw' } });
    });

    it('fails the waiting task with the error name and cause given to SendTaskFailure', async () => {
      const { executionId, token } = await harness.startWaiting('step', fresh(), { timeoutSeconds: WAIT_SECONDS });

      await harness.executions.sendTaskFailure(token, 'StepCancelled', 'the run was cancelled');
      await harness.settle();

      expect(harness.state(executionId)).toEqual({
        status: 'FAILED',
        error: 'StepCancelled',
        cause: 'the run was cancelled',
      });
    });

    it('refuses a second answer to the same token with a ConflictError', async () => {
      const { token } = await harness.startWaiting('step', fresh(), { timeoutSeconds: WAIT_SECONDS });
      await harness.executions.sendTaskSuccess(token, { decision: 'approve' });

      const second = await rejection(harness.executions.sendTaskSuccess(token, { decision: 'reject' }));
      const failure = await rejection(harness.executions.sendTaskFailure(token, 'Late', 'too late'));

      expect(isConflictError(second)).toBe(true);
      expect(isConflictError(failure)).toBe(true);
    });

    it('refuses a token it never issued with a ConflictError', async () => {
      const error = await rejection(harness.executions.sendTaskSuccess('never-issued-token', {}));

      expect(isConflictError(error)).toBe(true);
    });

    it('refuses an answer after the task timed out with a ConflictError', async () => {
      const { executionId, token } = await harness.startWaiting('step', fresh(), { timeoutSeconds: 1 });
      await harness.expire(token, executionId);

      const error = await rejection(harness.executions.sendTaskSuccess(token, { decision: 'approve' }));

      expect(isConflictError(error)).toBe(true);
      expect(harness.state(executionId)).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
    });

    it('stops a running execution, after which its token is closed', async () => {
      const { executionId, token } = await harness.startWaiting('step', fresh(), { timeoutSeconds: WAIT_SECONDS });

      await harness.executions.stop(executionId, 'RunCancelled', 'cancelled by a person');
      const late = await rejection(harness.executions.sendTaskSuccess(token, {}));

      expect(harness.state(executionId)).toEqual({
        status: 'ABORTED',
        error: 'RunCancelled',
        cause: 'cancelled by a person',
      });
      expect(isConflictError(late)).toBe(true);
    });

    it('treats stopping a finished or unknown execution as harmless', async () => {
      const { executionId, token } = await harness.startWaiting('run', fresh(), { timeoutSeconds: WAIT_SECONDS });
      await harness.executions.sendTaskSuccess(token, { finished: true });
      await harness.settle();
      const unknown = executionId.replace(/:[^:]+$/, ':no-such-execution');

      await harness.executions.stop(executionId, 'Late', 'after the end');
      await harness.executions.stop(unknown, 'Unknown', 'never started');

      expect(harness.state(executionId)?.status).toBe('SUCCEEDED');
    });
  });
}
