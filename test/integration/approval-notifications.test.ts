/**
 * Approvals reach people: the embedded stack started with a notification URL (a receiver in this test) POSTs a
 * Standard-Webhooks-signed notification when a gate asks, a reminder at 80 % of its deadline, and its outcome. The
 * receiver's failures are retried with backoff and never touch the run.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { newWebhookSecret, verifyWebhook } from '../../shared/webhooks/signature.ts';
import { decide, pendingApproval } from '../support/api-reads.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';
import { type NotifyReceiver, type Received, startNotifyReceiver } from '../support/notify-receiver.ts';

const SECRET = newWebhookSecret();
let receiver: NotifyReceiver;

beforeAll(async () => {
  receiver = await startNotifyReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const stack = useTestStack(() => ({
  settings: settingsFromEnv({ CAIRN_NOTIFY_URL: receiver.url, CAIRN_NOTIFY_SECRET: SECRET }),
  notifySending: { baseDelayMs: 5, maxDelayMs: 20 },
}));

const gatePlan = (objective: string, approval: PlanStep['approval']) =>
  plan(objective, [
    step(stack, 'gate', T.approver, { input: {}, approval }),
    step(stack, 'after', T.echo, { dependsOn: ['gate'], input: { value: 'after' } }),
  ]);

const about = (approvalId: string, type: string) => (r: Received) =>
  r.body.type === type && r.body.data.approvalId === approvalId;

describe('approval notifications from the embedded stack', () => {
  it('posts a signed approval.requested with the question, run, step, deadline and deep link', async () => {
    const runId = await stack.startRun({
      plan: gatePlan('notify ask', { question: 'Ship 1.2?', timeoutSeconds: 600 }),
    });
    const approval = await pendingApproval(stack, runId, 'gate');

    const got = await receiver.waitFor(about(approval.approvalId, 'approval.requested'));

    // The signature, checked once with cairn's verifier and once by hand as any receiver would.
    const header = (name: string) => got.headers[name] as string | undefined;
    expect(
      verifyWebhook({ secret: SECRET, header, body: got.raw, nowSeconds: Math.floor(Date.now() / 1000) }),
    ).toMatchObject({
      scheme: 'standard',
      replayId: `id:${header('webhook-id')}`,
    });
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const signed = `${header('webhook-id')}.${header('webhook-timestamp')}.${got.raw.toString('utf8')}`;
    expect(header('webhook-signature')).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.body.data).toMatchObject({
      approvalId: approval.approvalId,
      runId,
      stepId: 'gate',
      kind: 'approval',
      question: 'Ship 1.2?',
      status: 'pending',
      deadline: approval.deadline,
      link: `${stack.url}/console/#/runs/${runId}?step=gate`,
    });
    expect(got.body.text).toContain('Ship 1.2?');
    await decide(stack, approval, { decision: 'approve' });
    await waitForRun(stack, runId);
  });

  it('posts approval.decided with who decided once a person approves, and the run goes on', async () => {
    const runId = await stack.startRun({ plan: gatePlan('notify decide', { question: 'Go?', timeoutSeconds: 600 }) });
    const approval = await pendingApproval(stack, runId, 'gate');

    await decide(stack, approval, { decision: 'approve', comment: 'fine' });
    const got = await receiver.waitFor(about(approval.approvalId, 'approval.decided'));
    const done = await waitForRun(stack, runId);

    expect(got.body.data).toMatchObject({ status: 'approved', decidedAt: expect.any(String) });
    expect(done.status).toBe('complete');
    const requested = receiver.received.filter(about(approval.approvalId, 'approval.requested'));
    expect(requested).toHaveLength(1);
    expect(requested[0]?.headers['webhook-id']).not.toBe(got.headers['webhook-id']);
  });

  it('posts a reminder at 80 % of the deadline while pending, then approval.expired', async () => {
    const runId = await stack.startRun({ plan: gatePlan('notify remind', { question: 'Still?', timeoutSeconds: 5 }) });
    const approval = await pendingApproval(stack, runId, 'gate');

    const reminder = await receiver.waitFor(about(approval.approvalId, 'approval.reminder'), 10_000);
    const expired = await receiver.waitFor(about(approval.approvalId, 'approval.expired'), 10_000);

    const created = Date.parse(String(reminder.body.data.createdAt));
    const due = created + 0.8 * (Date.parse(approval.deadline) - created);
    expect(Date.parse(reminder.body.timestamp)).toBeGreaterThanOrEqual(due - 50);
    expect(Date.parse(reminder.body.timestamp)).toBeLessThan(Date.parse(approval.deadline));
    expect(expired.body.data.status).toBe('expired');
    await waitForRun(stack, runId, (run) => run.status !== 'running');
  });

  it('posts approval.closed when the run is cancelled while the gate waits', async () => {
    const runId = await stack.startRun({
      plan: gatePlan('notify cancel', { question: 'Maybe?', timeoutSeconds: 600 }),
    });
    const approval = await pendingApproval(stack, runId, 'gate');

    await stack.request('POST', `/runs/${runId}/cancel`, {});
    const got = await receiver.waitFor(about(approval.approvalId, 'approval.closed'));

    expect(got.body.data).toMatchObject({ status: 'expired', reason: expect.any(String) });
    expect((await waitForRun(stack, runId)).status).toBe('cancelled');
  });

  it('retries a receiver that answers 503 and takes the same message id on the try that lands', async () => {
    receiver.fail(2, 503);
    const runId = await stack.startRun({ plan: gatePlan('notify retry', { question: 'Retry?', timeoutSeconds: 600 }) });
    const approval = await pendingApproval(stack, runId, 'gate');

    const got = await receiver.waitFor(about(approval.approvalId, 'approval.requested'));

    expect(got.body.data.question).toBe('Retry?');
    await decide(stack, approval, { decision: 'approve' });
    expect((await waitForRun(stack, runId)).status).toBe('complete');
  });

  it('never touches the run when the receiver refuses every notification', async () => {
    receiver.fail(1_000, 500);
    try {
      const runId = await stack.startRun({ plan: gatePlan('notify down', { question: 'Down?', timeoutSeconds: 600 }) });
      const approval = await pendingApproval(stack, runId, 'gate');

      const answer = await decide(stack, approval, { decision: 'approve' });
      const done = await waitForRun(stack, runId);

      expect(answer.status).toBe(200);
      expect(done.status).toBe('complete');
      expect(receiver.received.filter((r) => r.body.data.approvalId === approval.approvalId)).toHaveLength(0);
    } finally {
      receiver.fail(0);
    }
  });
});
