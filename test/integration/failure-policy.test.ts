/**
 * Per-step failure policies (`onFailure`) through the embedded runtime and the real synthesized state machines:
 * `continue` lets dependents run on a null output and the run complete, `fail-run` ends the run at once with its
 * open steps cancelled, `pause` leaves the run for a person.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import {
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';

const stack = useTestStack();

const start = (objective: string, steps: PlanStep[]) => stack.startRun({ plan: plan(objective, steps) });
const failing = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.fail, { input: { message: `${id} fails`, retryable: false }, ...fields });
const settledOrPaused = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

describe('onFailure', () => {
  it('continue: dependents see the failure as null and the run completes, its evidence listing the failure', async () => {
    const runId = await start('policy: continue', [
      failing('probe', { onFailure: 'continue' }),
      step(stack, 'report', T.echo, { dependsOn: ['probe'], input: { value: '{% $outputs.probe %}' } }),
    ]);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('complete');
    expect(statusOf(run, 'probe')).toBe('failed');
    expect(stepOf(run, 'report').output).toEqual({ value: null });
    expect(run.terminal?.evidence).toMatchObject({ continued: ['probe'], rootCauses: [] });
  });

  it('fail-run: the run fails at once and its open steps are cancelled', async () => {
    const runId = await start('policy: fail-run', [
      failing('guard', { onFailure: 'fail-run' }),
      step(stack, 'slow', T.sleep, { input: { ms: 30_000 } }),
    ]);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(run.terminal?.reason).toBe('step_failed');
    expect(run.terminal?.evidence).toMatchObject({ rootCauses: ['guard'] });
    expect(statusOf(run, 'slow')).toBe('cancelled');
    expect(stepOf(run, 'slow').error?.code).toBe('E_RUN_FAILED');
  });

  it('pause: the run is left paused for a person, its downstream blocked', async () => {
    const runId = await start('policy: pause', [
      failing('check', { onFailure: 'pause' }),
      step(stack, 'after', T.echo, { dependsOn: ['check'], input: { value: 1 } }),
    ]);
    const run = await waitForRun(stack, runId, settledOrPaused);
    expect(run.status, summary(run)).toBe('paused');
    expect(run.terminal?.reason).toBe('failure_paused');
    expect(run.terminal?.evidence).toMatchObject({ stepId: 'check', error: { code: 'E_CONFORMANCE_FAIL' } });
    expect(statusOf(run, 'after')).toBe('blocked');
  });
});
