import 'aws-sdk-client-mock-vitest/extend';
import { ConflictException, CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSchedulerReminders, reminderScheduleName } from '../../../shared/adapters/aws/scheduler-reminders.ts';
import { createReminderTimers } from '../../../shared/adapters/local/reminder-timers.ts';
import type { ApprovalRecord } from '../../../shared/ports/records/approvals.ts';

const scheduler = mockClient(SchedulerClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  scheduler.restore();
});
const NOW = new Date('2030-01-01T00:00:00.000Z');

beforeEach(() => {
  scheduler.reset();
  vi.stubEnv('AWS_REGION', 'us-east-1');
});

describe('createSchedulerReminders', () => {
  const reminders = () =>
    createSchedulerReminders({
      group: 'cairn-prod-notify',
      roleArn: 'arn:aws:iam::123456789012:role/reminders',
      targetArn: () => 'arn:aws:lambda:us-east-1:123456789012:function:notifier',
      client: new SchedulerClient({}),
      clock: () => NOW,
    });

  it('creates a one-shot schedule at the reminder time that invokes the notifier and deletes itself', async () => {
    scheduler.on(CreateScheduleCommand).resolves({});

    await reminders().schedule('run-1.gate.g1.approval.a1.1', new Date('2030-01-01T01:20:00.000Z'));

    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      Name: reminderScheduleName('run-1.gate.g1.approval.a1.1'),
      GroupName: 'cairn-prod-notify',
      ScheduleExpression: 'at(2030-01-01T01:20:00)',
      ScheduleExpressionTimezone: 'UTC',
      ActionAfterCompletion: 'DELETE',
      Target: expect.objectContaining({
        Arn: 'arn:aws:lambda:us-east-1:123456789012:function:notifier',
        Input: JSON.stringify({ 'cairn-notify': 'reminder', approvalId: 'run-1.gate.g1.approval.a1.1' }),
      }),
    });
    expect(reminderScheduleName('x'.repeat(500))).toMatch(/^[0-9A-Za-z_.-]{1,64}$/);
  });

  it('takes a schedule that already exists as done, and a time past as a minute from now', async () => {
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ConflictException({ message: 'exists', Message: 'exists', $metadata: {} }));

    await expect(reminders().schedule('a-1', new Date('2029-12-31T00:00:00.000Z'))).resolves.toBeUndefined();
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      ScheduleExpression: 'at(2030-01-01T00:01:00)',
    });
  });
});

describe('createReminderTimers', () => {
  it('calls back when a reminder is due and arms again every pending approval of the store', async () => {
    vi.useFakeTimers({ now: NOW });
    try {
      const timers = createReminderTimers();
      const due: string[] = [];
      timers.onDue(async (id) => {
        due.push(id);
      });
      const pending = (approvalId: string, minutes: number): ApprovalRecord =>
        ({
          approvalId,
          createdAt: NOW.toISOString(),
          deadline: new Date(NOW.getTime() + minutes * 60_000).toISOString(),
        }) as ApprovalRecord;
      const pages = [[pending('a', 10), pending('b', 100)], []];
      const armed = await timers.rearm({ listApprovals: async () => pages.shift() ?? [] });

      await vi.advanceTimersByTimeAsync(8 * 60_000);
      await timers.idle();
      const early = [...due];
      await vi.advanceTimersByTimeAsync(80 * 60_000);
      await timers.idle();
      timers.close();

      expect(armed).toBe(2);
      expect(early).toEqual(['a']);
      expect(due).toEqual(['a', 'b']);
    } finally {
      vi.useRealTimers();
    }
  });
});
