import { describe, expect, it } from 'vitest';
import { NOTIFIER_TIMEOUT_SECONDS, NOTIFY_LEASE_SECONDS } from '../../../shared/config/defaults.ts';
import { messageIdOf, notificationOf, outcomeOf, reminderDue } from '../../../shared/notify/messages.ts';
import { createNotifier, NotificationInProgressError } from '../../../shared/notify/notifier.ts';
import type { OutgoingNotification } from '../../../shared/ports/notifications.ts';
import type { ApprovalRecord } from '../../../shared/ports/records/approvals.ts';
import type { IdempotencyRecord } from '../../../shared/ports/records/steps.ts';
import { NotificationDeliveryError } from '../../../shared/webhooks/errors.ts';

const CREATED = '2030-01-01T00:00:00.000Z';
const DEADLINE = '2030-01-01T01:40:00.000Z'; // 100 minutes later

const approval = (fields: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  approvalId: 'a-1',
  runId: 'run-1',
  stepId: 'gate',
  generation: 1,
  kind: 'approval',
  status: 'pending',
  question: 'Ship it?',
  taskToken: 'token',
  createdAt: CREATED,
  deadline: DEADLINE,
  ...fields,
});

/** The store calls the notifier makes: approvals to read, and its own idempotency records. */
function fakeStore() {
  const approvals = new Map<string, ApprovalRecord>();
  const records = new Map<string, IdempotencyRecord>();
  const leases: number[] = [];
  return {
    async putApproval(record: ApprovalRecord) {
      approvals.set(record.approvalId, record);
    },
    async decideApproval(id: string, decision: Partial<ApprovalRecord>) {
      const found = approvals.get(id);
      if (found) approvals.set(id, { ...found, ...decision });
    },
    async getApproval(id: string) {
      return approvals.get(id);
    },
    async listRunApprovals(runId: string) {
      return [...approvals.values()].filter((a) => a.runId === runId);
    },
    /** As the store does: a record whose time is over counts as absent (an expired lease is taken over). */
    async beginIdempotent(key: string, expiresAt: number, now: number) {
      const existing = records.get(key);
      if (existing && existing.expiresAt >= now) return existing;
      records.set(key, { key, status: 'in_progress', expiresAt });
      leases.push(expiresAt - now);
      return undefined;
    },
    async completeIdempotent(key: string, result: unknown, expiresAt: number) {
      records.set(key, { key, status: 'completed', result, expiresAt });
    },
    records,
    leases,
    async abortIdempotent(key: string) {
      records.delete(key);
    },
  };
}

function setup(options: { failing?: number } = {}) {
  let now = new Date('2030-01-01T00:00:01.000Z');
  const store = fakeStore();
  const sent: OutgoingNotification[] = [];
  const scheduled: [string, string][] = [];
  let failing = options.failing ?? 0;
  const logged: Record<string, unknown>[] = [];
  const notifier = createNotifier({
    store,
    sender: {
      async send(notification) {
        if (failing > 0) {
          failing -= 1;
          throw new NotificationDeliveryError('down', { attempts: 5, url: 'https://r.example', status: 500 });
        }
        sent.push(notification);
      },
    },
    reminders: {
      async schedule(approvalId, at) {
        scheduled.push([approvalId, at.toISOString()]);
      },
    },
    clock: () => now,
    consoleUrl: 'https://cairn.example/console/',
    log: (entry) => logged.push(entry),
  });
  return {
    store,
    notifier,
    sent,
    scheduled,
    logged,
    setNow: (iso: string) => {
      now = new Date(iso);
    },
  };
}

const requested = {
  'detail-type': 'ApprovalRequested',
  detail: { runId: 'run-1', stepId: 'gate', generation: 1, approvalId: 'a-1', kind: 'approval', deadline: DEADLINE },
};
const decided = {
  'detail-type': 'ApprovalDecided',
  detail: { runId: 'run-1', stepId: 'gate', generation: 1, approvalId: 'a-1', decision: 'approve' },
};

describe('notification messages', () => {
  it('names the reminder time at 80 % of the time between the request and its deadline', () => {
    expect(reminderDue(approval()).toISOString()).toBe('2030-01-01T01:20:00.000Z');
  });

  it.each<[string, Partial<ApprovalRecord>, string | undefined]>([
    ['pending', {}, undefined],
    ['approved', { status: 'approved', decidedAt: CREATED }, 'approval.decided'],
    ['edited', { status: 'edited', decidedAt: CREATED }, 'approval.decided'],
    ['expired at its deadline', { status: 'expired', decidedAt: DEADLINE }, 'approval.expired'],
    [
      'closed by an invalidation',
      { status: 'expired', decidedAt: CREATED, comment: 'superseded: the step was invalidated' },
      'approval.superseded',
    ],
    [
      'closed by a cancel',
      { status: 'expired', decidedAt: CREATED, comment: 'the run was cancelled' },
      'approval.closed',
    ],
  ])('calls an approval %s by its outcome', (_name, fields, type) => {
    expect(outcomeOf(approval(fields))).toBe(type);
  });

  it('gives each notification one stable id per approval and type', () => {
    const at = new Date(CREATED);
    const first = notificationOf('approval.requested', approval(), { at });
    const again = notificationOf('approval.requested', approval(), { at: new Date(DEADLINE) });

    expect(first.id).toBe(again.id);
    expect(first.id).toBe(messageIdOf('a-1', 'approval.requested'));
    expect(first.id).not.toBe(messageIdOf('a-1', 'approval.reminder'));
    expect(first.id).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
  });

  it('carries the approval, the deep link and a Slack-style text', () => {
    const { body } = notificationOf('approval.requested', approval({ question: 'x'.repeat(5_000) }), {
      at: new Date(CREATED),
      consoleUrl: 'https://cairn.example/console/',
    });

    expect(body).toMatchObject({
      type: 'approval.requested',
      timestamp: CREATED,
      data: {
        approvalId: 'a-1',
        runId: 'run-1',
        stepId: 'gate',
        deadline: DEADLINE,
        link: 'https://cairn.example/console/#/runs/run-1?step=gate',
      },
    });
    expect(String((body.data as { question: string }).question).length).toBeLessThanOrEqual(1_001);
    expect(body.text).toMatch(
      /^Approval requested: x+… \(run run-1, step gate\)\nDecide by 2030-01-01T01:40:00.000Z\.\nhttps:/,
    );
  });
});

describe('createNotifier', () => {
  it('sends approval.requested once and schedules the reminder when an approval is requested', async () => {
    const n = setup();
    await n.store.putApproval(approval());

    await n.notifier.handle(requested);
    await n.notifier.handle(requested); // a redelivery of the same event

    expect(n.sent.map((s) => s.type)).toEqual(['approval.requested']);
    expect(n.scheduled).toEqual([
      ['a-1', '2030-01-01T01:20:00.000Z'],
      ['a-1', '2030-01-01T01:20:00.000Z'],
    ]);
  });

  it('throws the retryable NotificationInProgressError when another invocation holds the notification', async () => {
    const n = setup();
    await n.store.putApproval(approval());
    const now = Math.floor(Date.parse('2030-01-01T00:00:01.000Z') / 1000);
    const key = 'notify#a-1#requested';
    n.store.records.set(key, { key, status: 'in_progress', expiresAt: now + 30 });

    const error = await n.notifier.handle(requested).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(NotificationInProgressError);
    expect(error).toMatchObject({ retryable: true, context: { code: 'E_NOTIFY_IN_PROGRESS', key } });
    expect(n.sent).toEqual([]);
  });

  it('sends what a dead holder left once its lease, shorter than the Lambda timeout, is over', async () => {
    const n = setup();
    await n.store.putApproval(approval());
    await n.store.beginIdempotent('notify#a-1#requested', 0, 0); // an old holder's lease, long over

    n.setNow('2030-01-01T00:00:02.000Z');
    await n.notifier.handle(requested);

    expect(n.sent.map((s) => s.type)).toEqual(['approval.requested']);
    expect(n.store.leases.at(-1)).toBe(NOTIFY_LEASE_SECONDS);
    expect(NOTIFY_LEASE_SECONDS).toBeLessThan(NOTIFIER_TIMEOUT_SECONDS);
  });

  it('sends the reminder once when it is due and the approval still pending', async () => {
    const n = setup();
    await n.store.putApproval(approval());
    n.setNow('2030-01-01T01:20:00.000Z');

    await n.notifier.remind('a-1');
    await n.notifier.remind('a-1');

    expect(n.sent.map((s) => s.type)).toEqual(['approval.reminder']);
  });

  it('waits again instead of reminding early', async () => {
    const n = setup();
    await n.store.putApproval(approval());

    const report = await n.notifier.remind('a-1');

    expect(report.sent).toEqual([]);
    expect(n.scheduled).toEqual([['a-1', '2030-01-01T01:20:00.000Z']]);
  });

  it('sends the outcome instead of a reminder when the approval was closed without an announcement', async () => {
    const n = setup();
    await n.store.putApproval(approval());
    await n.store.decideApproval('a-1', { status: 'expired', decidedAt: CREATED, comment: 'the run was cancelled' });
    n.setNow('2030-01-01T01:20:00.000Z');

    await n.notifier.remind('a-1');

    expect(n.sent.map((s) => s.type)).toEqual(['approval.closed']);
  });

  it("sends one outcome whether the decision or the run's end reports it first", async () => {
    const n = setup();
    await n.store.putApproval(approval());
    await n.store.decideApproval('a-1', { status: 'approved', decidedAt: CREATED, decidedBy: 'ana' });

    await n.notifier.handle(decided);
    await n.notifier.handle({
      'detail-type': 'RunFinished',
      detail: { runId: 'run-1', state: 'complete', reason: 'x' },
      time: CREATED,
    });

    expect(n.sent.map((s) => [s.type, (s.body.data as { decidedBy?: string }).decidedBy])).toEqual([
      ['approval.decided', 'ana'],
    ]);
  });

  it('finds approvals a run-level decision closed without announcing them', async () => {
    const n = setup();
    await n.store.putApproval(approval());
    await n.store.decideApproval('a-1', {
      status: 'expired',
      decidedAt: CREATED,
      comment: 'superseded: the step was invalidated',
    });

    await n.notifier.handle({
      'detail-type': 'StepsInvalidated',
      detail: { runId: 'run-1', stepIds: ['gate'], part: 1, parts: 1, total: 1, reason: 'changed' },
      time: CREATED,
    });

    expect(n.sent.map((s) => s.type)).toEqual(['approval.superseded']);
  });

  it('logs a failed delivery, touches nothing else and sends it when the event comes again', async () => {
    const n = setup({ failing: 1 });
    await n.store.putApproval(approval());

    const failed = await n.notifier.handle(requested);
    const retried = await n.notifier.handle(requested);

    expect(failed.failed).toEqual([{ approvalId: 'a-1', type: 'approval.requested', code: 'E_NOTIFY_DELIVERY' }]);
    expect(n.logged[0]).toMatchObject({ code: 'E_NOTIFY_DELIVERY', approvalId: 'a-1' });
    expect(retried.sent).toEqual([{ approvalId: 'a-1', type: 'approval.requested' }]);
    expect((await n.store.getApproval('a-1'))?.status).toBe('pending');
  });

  it('ignores events it does not consume and approvals it cannot find', async () => {
    const n = setup();

    const other = await n.notifier.handle({ 'detail-type': 'StepStarted', detail: {} });
    const missing = await n.notifier.handle(requested);

    expect([other, missing]).toEqual([
      { sent: [], failed: [] },
      { sent: [], failed: [] },
    ]);
  });
});
