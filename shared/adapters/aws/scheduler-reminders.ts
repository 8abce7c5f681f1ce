/**
 * The deployed reminders (ReminderScheduler): one EventBridge Scheduler one-shot schedule per approval, `at(...)`
 * in UTC, in the notifier's own schedule group, that invokes the notifier Lambda with `{"cairn-notify":
 * "reminder", "approvalId": …}` and deletes itself once it has run. The schedule's name is derived from the
 * approval id, so scheduling one twice is a ConflictException, taken as done.
 */

import { createHash } from 'node:crypto';
import { CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { ReminderScheduler } from '../../ports/notifications.ts';
import { schedulerClient } from './clients.ts';

export const REMINDER_EVENT_KEY = 'cairn-notify';

export interface SchedulerRemindersOptions {
  /** The schedule group (CAIRN_NOTIFY_SCHEDULE_GROUP). */
  readonly group: string;
  /** The role EventBridge Scheduler assumes to invoke the target (CAIRN_NOTIFY_SCHEDULER_ROLE_ARN). */
  readonly roleArn: string;
  /** The notifier Lambda's ARN (its own, from the invocation's context). */
  readonly targetArn: () => string;
  readonly client?: SchedulerClient;
  readonly clock?: () => Date;
}

/** A schedule name (≤ 64 characters of [0-9A-Za-z-_.]) per approval. */
export const reminderScheduleName = (approvalId: string): string =>
  `remind-${createHash('sha256').update(approvalId, 'utf8').digest('hex').slice(0, 40)}`;

/** Scheduler's `at()` takes `yyyy-mm-ddThh:mm:ss`, no zone (the schedule says UTC). */
const atExpression = (at: Date): string => `at(${at.toISOString().slice(0, 19)})`;

export function createSchedulerReminders(options: SchedulerRemindersOptions): ReminderScheduler {
  const client = options.client ?? schedulerClient();
  const clock = options.clock ?? (() => new Date());
  return {
    async schedule(approvalId, at) {
      // A time already past (or about to be) still gets a schedule a minute out: Scheduler refuses the past.
      const when = new Date(Math.max(at.getTime(), clock().getTime() + 60_000));
      try {
        await client.send(
          new CreateScheduleCommand({
            Name: reminderScheduleName(approvalId),
            GroupName: options.group,
            ScheduleExpression: atExpression(when),
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Target: {
              Arn: options.targetArn(),
              RoleArn: options.roleArn,
              Input: JSON.stringify({ [REMINDER_EVENT_KEY]: 'reminder', approvalId }),
              RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
            },
          }),
        );
      } catch (error) {
        if ((error as { name?: unknown }).name === 'ConflictException') return;
        throw error;
      }
    },
  };
}
