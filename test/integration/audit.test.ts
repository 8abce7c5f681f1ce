/**
 * The audit trail through the embedded stack (the synthesized state machines): an attempt records the plan
 * revision it ran under and its verdict, and a cancellation and an invalidation record who asked (the embedded
 * API's static token is `local-token`): in the terminal evidence, in the run view's `actions` and in the published
 * event.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { auditLog } from '../support/api-reads.ts';
import { getRun, plan, statusOf, step, useTestStack, waitForRun } from '../support/local-stack.ts';

interface Action {
  type: string;
  requestedBy: string | null;
  stepId?: string;
}
const actionsOf = async (runId: string) => ((await getRun(stack, runId)) as unknown as { actions?: Action[] }).actions;
const detailsOf = async (runId: string, type: string) =>
  (await auditLog(stack, runId)).filter((e) => e.type === type).map((e) => e.detail);

interface AttemptView {
  attempt: number;
  outcome: string;
  revision?: number;
  verdict?: string;
}

interface TraceView {
  kind: string;
  text: string;
}

const stack = useTestStack();

async function attemptsOf(runId: string, stepId: string): Promise<AttemptView[]> {
  const { status, json } = await stack.request('GET', `/runs/${runId}/steps/${stepId}`);
  expect(status).toBe(200);
  return (json as { attempts: AttemptView[] }).attempts;
}

describe('audit on the embedded stack', { timeout: 120_000 }, () => {
  it('records the plan revision and the verdict on each attempt', async () => {
    const runId = await stack.startRun({
      plan: plan('attempts with verdicts', [
        step(stack, 'ok', T.echo, { input: { value: 1 } }),
        step(stack, 'bad', T.fail, { input: { message: 'no', retryable: false } }),
      ]),
    });
    await waitForRun(stack, runId);
    expect(await attemptsOf(runId, 'ok')).toMatchObject([
      { attempt: 1, outcome: 'succeeded', revision: 1, verdict: 'pass' },
    ]);
    expect(await attemptsOf(runId, 'bad')).toMatchObject([
      { attempt: 1, outcome: 'failed', revision: 1, verdict: 'fail' },
    ]);
  });

  it("shows the planner's reasoning in each step's [plan] trace entry: the HTN methods chosen and why", async () => {
    const { status, json } = await stack.request('POST', '/runs', {
      objective: 'Compile a competitor research report on Acme and Globex',
    });
    expect(status).toBe(202);
    const { runId } = json as { runId: string };
    const run = await waitForRun(stack, runId, (r) => r.steps.length > 0);
    const review = run.steps.find((s) => s.id === 'review') as unknown as { trace: TraceView[] };
    const planned = review.trace.find((e) => e.kind === 'plan');
    expect(planned?.text).toMatch(/^Editorial review of the report → human:editor\.review\. Why: HTN: objective: /);
    expect(planned?.text).toContain('method competitor-report, because the objective asks for competitor research');
    const revision = await stack.request('GET', `/runs/${runId}/plan?revision=1`);
    expect((revision.json as { plan: { rationale?: string } }).plan.rationale).toMatch(/^HTN: objective: /);
    await stack.request('POST', `/runs/${runId}/cancel`);
    await waitForRun(stack, runId);
  });

  it("keeps a submitted plan's rationale and shows it in the [plan] trace entry", async () => {
    const runId = await stack.startRun({
      plan: {
        ...plan('a plan with its reasons', [step(stack, 'slow', T.sleep, { input: { ms: 20_000 } })]),
        rationale: 'one slow step: nothing else is needed',
      },
    });
    const run = await waitForRun(stack, runId, (r) => statusOf(r, 'slow') === 'running');
    const slow = run.steps.find((s) => s.id === 'slow') as unknown as { trace: TraceView[] };
    expect(slow.trace[0]).toMatchObject({
      kind: 'plan',
      text: 'Step slow → tool:conformance.sleep. Why: one slow step: nothing else is needed',
    });
    await stack.request('POST', `/runs/${runId}/cancel`);
    await waitForRun(stack, runId);
  });

  it('records who cancelled a run', async () => {
    const runId = await stack.startRun({
      plan: plan('cancel me', [step(stack, 'slow', T.sleep, { input: { ms: 20_000 } })]),
    });
    await waitForRun(stack, runId, (run) => statusOf(run, 'slow') === 'running');
    expect((await stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
    const run = await waitForRun(stack, runId);
    expect(run.status).toBe('cancelled');
    expect(run.terminal?.evidence.requestedBy).toBe('local-token');
    expect(await actionsOf(runId)).toEqual([expect.objectContaining({ type: 'cancel', requestedBy: 'local-token' })]);
    expect(await detailsOf(runId, 'RunFinished')).toEqual([
      { runId, state: 'cancelled', reason: 'cancelled', requestedBy: 'local-token' },
    ]);
  });

  it('records who invalidated a step, in the run view and in the published event', async () => {
    const runId = await stack.startRun({
      plan: plan('invalidate me', [
        step(stack, 'a', T.echo, { input: { value: 'a' } }),
        step(stack, 'b', T.echo, { dependsOn: ['a'], input: { value: 'b' } }),
      ]),
    });
    await waitForRun(stack, runId);
    const answer = await stack.request('POST', `/runs/${runId}/steps/a/invalidate`, { reason: 'the data changed' });
    expect(answer.status).toBe(202);
    await waitForRun(stack, runId, (run) => run.status === 'complete' && statusOf(run, 'b') === 'succeeded');
    expect(await actionsOf(runId)).toEqual([
      expect.objectContaining({ type: 'invalidate', requestedBy: 'local-token', stepId: 'a' }),
    ]);
    expect(await detailsOf(runId, 'StepsInvalidated')).toEqual([
      expect.objectContaining({ stepIds: ['a', 'b'], requestedBy: 'local-token' }),
    ]);
  });
});
