/**
 * The notifier Lambda: tells people about approvals (shared/notify/notifier.ts). Two kinds of invocation:
 * - the `ApprovalsToNotifier` bus rule (shared/events/bus-rules.ts NOTIFY_RULE): an EventBridge event;
 * - a reminder's one-shot EventBridge Scheduler schedule: `{"cairn-notify": "reminder", "approvalId": "…"}`.
 *
 * A consumer of the bus, not part of any run: it reads approvals and writes only its own memory of what it sent.
 * A notification the receivers did not take after the sender's retries is logged and the invocation succeeds, so
 * neither EventBridge nor Lambda retries it on top (one owner of retries).
 * A notification another invocation still holds fails the invocation (`NotificationInProgressError`, retryable):
 * Lambda's retry comes after the holder's lease, shorter than this function's timeout, is over.
 *
 * Environment (shared/config/notify-settings.ts): CAIRN_NOTIFY_URL, CAIRN_NOTIFY_SECRET_ARN (readable by this
 * function alone), CAIRN_CONSOLE_URL, CAIRN_NOTIFY_SCHEDULE_GROUP, CAIRN_NOTIFY_SCHEDULER_ROLE_ARN, CAIRN_TABLE_NAME.
 */
import { z } from 'zod';
import { notifySecretReader } from '../shared/adapters/aws/notify-secret.ts';
import { awsPlace } from '../shared/adapters/aws/place.ts';
import { createSchedulerReminders, REMINDER_EVENT_KEY } from '../shared/adapters/aws/scheduler-reminders.ts';
import { type Env, settingsFromEnv } from '../shared/config/settings.ts';
import { ValidationError } from '../shared/errors.ts';
import { notifierFor } from '../shared/notify/compose.ts';
import type { Notifier, NotifyReport } from '../shared/notify/notifier.ts';
import { lazyHandler } from './root.ts';

export interface NotifierHandlerDeps {
  /** Built for the invoked function (its ARN is the reminders' target). */
  readonly notifier: (invokedFunctionArn: string) => Notifier;
}

const reminderSchema = z.object({ [REMINDER_EVENT_KEY]: z.literal('reminder'), approvalId: z.string().min(1) });
const envelopeSchema = z.object({ 'detail-type': z.string(), detail: z.unknown(), time: z.string().optional() });

export function createHandler(deps: NotifierHandlerDeps) {
  return async (event: unknown, context: { readonly invokedFunctionArn: string }): Promise<NotifyReport> => {
    const notifier = deps.notifier(context.invokedFunctionArn);
    const reminder = reminderSchema.safeParse(event);
    if (reminder.success) return notifier.remind(reminder.data.approvalId);
    const envelope = envelopeSchema.safeParse(event);
    if (!envelope.success) {
      const message = 'neither an EventBridge event nor a reminder';
      throw new ValidationError(`notifier event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
    }
    return notifier.handle(envelope.data);
  };
}

function need(value: string | undefined, variable: string): string {
  if (value === undefined) throw new Error(`${variable} is not set`);
  return value;
}

/** The notifier over the Lambda's environment, built once per container. */
export function defaultDeps(env: Env = process.env): NotifierHandlerDeps {
  let built: Notifier | undefined;
  return {
    notifier: (functionArn) => {
      if (built !== undefined) return built;
      const settings = settingsFromEnv(env);
      const { notify } = settings;
      const reminders = createSchedulerReminders({
        group: need(notify.scheduleGroup, 'CAIRN_NOTIFY_SCHEDULE_GROUP'),
        roleArn: need(notify.schedulerRoleArn, 'CAIRN_NOTIFY_SCHEDULER_ROLE_ARN'),
        targetArn: () => functionArn,
      });
      const notifier = notifierFor(notify, {
        store: awsPlace(settings).store(),
        reminders,
        secret: notifySecretReader(need(notify.secretArn, 'CAIRN_NOTIFY_SECRET_ARN')),
        clock: () => new Date(),
      });
      if (notifier === undefined) throw new Error('CAIRN_NOTIFY_URL is not set: nothing to notify');
      built = notifier;
      return notifier;
    },
  };
}

export const handler = lazyHandler('notifier', () => createHandler(defaultDeps()));
