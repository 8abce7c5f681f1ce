/**
 * Human approvals and low-confidence reviews through the embedded runtime: the real step state machine parks on a
 * task token, the API decides, and exactly one decision counts.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { type ApprovalView, decide, pendingApproval } from '../support/api-reads.ts';
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

const gatePlan = (objective: string, approval: PlanStep['approval'] = { question: 'Ship it?', timeoutSeconds: 300 }) =>
  plan(objective, [
    step(stack, 'before', T.echo, { input: { value: 'before' } }),
    step(stack, 'gate', T.approver, { dependsOn: ['before'], input: {}, approval }),
    step(stack, 'after', T.echo, { dependsOn: ['gate'], input: { value: 'after' } }),
  ]);

// A run shows `paused` while its gate waits, so "settled" also needs the gate to have moved on.
const settled = (run: RunView) =>
  statusOf(run, 'gate') !== 'awaiting_approval' && ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

describe('approvals through the local runtime', () => {
  it('holds the steps after a gate until a person approves, then completes', async () => {
    const runId = await stack.startRun({ plan: gatePlan('approve') });
    const approval = await pendingApproval(stack, runId, 'gate');
    const waiting = await waitForRun(stack, runId, (run) => statusOf(run, 'gate') === 'awaiting_approval');

    const answer = await decide(stack, approval, { decision: 'approve', comment: 'fine' });
    const done = await waitForRun(stack, runId);

    expect(waiting.status).toBe('paused');
    expect(statusOf(waiting, 'after')).toBe('pending');
    expect(approval.question).toBe('Ship it?');
    expect(answer.status).toBe(200);
    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'gate').output).toMatchObject({ approved: true });
  });

  it('fails the gate on a rejection and blocks what depends on it', async () => {
    const runId = await stack.startRun({ plan: gatePlan('reject') });
    const approval = await pendingApproval(stack, runId, 'gate');

    const answer = await decide(stack, approval, { decision: 'reject', comment: 'not yet' });
    const done = await waitForRun(stack, runId, settled);

    expect(answer.status).toBe(200);
    expect(stepOf(done, 'gate')).toMatchObject({ status: 'failed', error: { code: 'E_REJECTED' } });
    expect(statusOf(done, 'after')).toBe('blocked');
    expect(done.status, summary(done)).toBe('failed');
  });

  it('refuses an edit whose output breaks the contract with 422 and keeps the approval pending', async () => {
    const runId = await stack.startRun({ plan: gatePlan('bad edit') });
    const approval = await pendingApproval(stack, runId, 'gate');

    const answer = await decide(stack, approval, { decision: 'edit', output: { approved: 'yes' } });
    const still = await stack.request('GET', `/approvals/${encodeURIComponent(approval.approvalId)}`);

    expect(answer.status).toBe(422);
    expect((still.json as { approval: ApprovalView }).approval.status).toBe('pending');
    await decide(stack, approval, { decision: 'approve' });
    await waitForRun(stack, runId);
  });

  it('uses an edited output downstream', async () => {
    const runId = await stack.startRun({ plan: gatePlan('edit') });
    const approval = await pendingApproval(stack, runId, 'gate');

    const answer = await decide(stack, approval, { decision: 'edit', output: { approved: true, comment: 'edited' } });
    const done = await waitForRun(stack, runId);

    expect(answer.status).toBe(200);
    expect(stepOf(done, 'gate').output).toEqual({ approved: true, comment: 'edited' });
    expect(done.status).toBe('complete');
  });

  it('counts exactly one of several concurrent decisions; the others get 409, its own repeats 200', async () => {
    const runId = await stack.startRun({ plan: gatePlan('race') });
    const approval = await pendingApproval(stack, runId, 'gate');

    const decisions = ['approve', 'reject', 'approve', 'reject', 'approve'];
    const answers = await Promise.all(decisions.map((decision) => decide(stack, approval, { decision })));
    const done = await waitForRun(stack, runId, settled);

    // The run's decider takes them one at a time: the first decides, a different decision is refused with the one
    // that won, and the same decision by the same person is its repeat (a request whose answer was lost looks the
    // same): answered as it was. The gate is judged once, by the winner.
    const { json } = await stack.request('GET', `/approvals/${encodeURIComponent(approval.approvalId)}`);
    const status = (json as { approval: ApprovalView }).approval.status;
    const won = status === 'approved' ? 'approve' : status === 'rejected' ? 'reject' : undefined;
    expect(won, `approval status ${status}`).toBeDefined();
    for (const [i, decision] of decisions.entries()) {
      const answer = answers[i];
      if (decision === won) expect(answer?.status, JSON.stringify(answer?.json)).toBe(200);
      else
        expect(answer).toMatchObject({
          status: 409,
          json: { error: { code: 'E_ALREADY_DECIDED', details: { decision: { decision: won } } } },
        });
    }
    expect(statusOf(done, 'gate'), summary(done)).toBe(won === 'approve' ? 'succeeded' : 'failed');
    expect(stepOf(done, 'gate').attempts).toBe(1);
  });

  it('answers 410 after the deadline and fails the gate under the default policy', async () => {
    const runId = await stack.startRun({ plan: gatePlan('expire', { question: 'Quick?', timeoutSeconds: 1 }) });
    const approval = await pendingApproval(stack, runId, 'gate');
    const done = await waitForRun(
      stack,
      runId,
      (run) => statusOf(run, 'gate') === 'failed' && statusOf(run, 'after') !== 'pending',
      15_000,
    );

    const late = await decide(stack, approval, { decision: 'approve' });

    expect(late.status).toBe(410);
    expect(stepOf(done, 'gate').error?.code).toBe('E_APPROVAL_EXPIRED');
    expect(statusOf(done, 'after')).toBe('blocked');
  });

  it("takes a tool's answer without a confidence as 1.0: a threshold on a tool asks nobody", async () => {
    const runId = await stack.startRun({
      plan: plan('sure tool', [step(stack, 'sure', T.echo, { input: { value: 'x' }, confidenceThreshold: 0.99 })]),
    });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    const { json } = await stack.request('GET', `/approvals?runId=${runId}`);
    expect((json as { approvals: unknown[] }).approvals).toEqual([]);
  });

  it('holds a low-confidence result for review before anything downstream sees it', async () => {
    const runId = await stack.startRun({
      plan: plan('review', [
        step(stack, 'guess', T.scripted, {
          input: { output: { answer: 41 }, confidence: 0.3 },
          confidenceThreshold: 0.8,
        }),
        step(stack, 'use', T.echo, { dependsOn: ['guess'], input: { value: '{% $outputs.guess.answer %}' } }),
      ]),
    });
    const review = await pendingApproval(stack, runId, 'guess');
    const held = await waitForRun(stack, runId, (run) => statusOf(run, 'guess') === 'awaiting_approval');

    await decide(stack, review, { decision: 'edit', output: { answer: 42 } });
    const done = await waitForRun(stack, runId);

    expect(review.kind).toBe('review');
    expect(statusOf(held, 'use')).toBe('pending');
    expect(stepOf(done, 'use').output).toEqual({ value: 42 });
    expect(done.status).toBe('complete');
  });
});
