/**
 * Timers deployed (shared/ports/timers.ts): a one-time EventBridge Scheduler schedule per timer, whose target is the
 * mailbox queue (the run id as message group), deleted once it has fired. A timer's name is its schedule's (a hash:
 * schedule names are short), so scheduling one twice is one schedule; one already due goes to the queue at once.
 */
import { createHash } from 'node:crypto';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { Mailbox } from '../../ports/mailbox.ts';
import type { Timers } from '../../ports/timers.ts';
import type { MailboxLetter } from './sqs-mailbox.ts';

export interface SchedulerTimersOptions {
  readonly client: SchedulerClient;
  readonly queueArn: string;
  /** The role EventBridge Scheduler sends to the queue with. */
  readonly roleArn: string;
  readonly groupName?: string;
  readonly mailbox: Mailbox;
  readonly clock?: () => Date;
}

/** `at(yyyy-mm-ddThh:mm:ss)`, in UTC, a second after `at` at the latest. */
const atExpression = (at: string): string =>
  `at(${new Date(Math.ceil(Date.parse(at) / 1000) * 1000).toISOString().slice(0, 19)})`;

export function createSchedulerTimers(options: SchedulerTimersOptions): Timers {
  const clock = options.clock ?? (() => new Date());
  return {
    async schedule(runId, name, at, command) {
      const { at: _at, ...input } = command;
      if (Date.parse(at) <= clock().getTime() + 1000) {
        await options.mailbox.send(runId, input);
        return;
      }
      const id = createHash('sha256').update(`${runId}#${name}`).digest('hex').slice(0, 40);
      const letter: MailboxLetter = { runId, id: `timer-${id}`, command: input };
      try {
        await options.client.send(
          new CreateScheduleCommand({
            Name: `cairn-${id}`,
            ...(options.groupName === undefined ? {} : { GroupName: options.groupName }),
            ScheduleExpression: atExpression(at),
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Target: {
              Arn: options.queueArn,
              RoleArn: options.roleArn,
              Input: JSON.stringify(letter),
              SqsParameters: { MessageGroupId: runId },
            },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConflictException)) throw error;
      }
    },
  };
}
