/**
 * Builds the approval notifier of a place from its settings (config/notify-settings.ts): the HTTP sender signed
 * with the notification secret, the place's reminders, and the store. Used by the notifier Lambda
 * (functions/notifier.ts) and the embedded runtime (infra/local/notify.ts); absent when no URL is configured.
 */
import { createHttpNotificationSender, type HttpNotificationSenderOptions } from '../adapters/http-notifier.ts';
import type { NotifySettings } from '../config/notify-settings.ts';
import type { ReminderScheduler } from '../ports/notifications.ts';
import { createNotifier, type Notifier, type NotifierDeps } from './notifier.ts';

export interface NotifierPlace {
  readonly store: NotifierDeps['store'];
  readonly reminders: ReminderScheduler;
  /** The signing secret (deployed: read from Secrets Manager; embedded: the setting). */
  readonly secret: string | (() => Promise<string>);
  readonly clock: () => Date;
  /** Overrides the setting's console URL (the embedded runtime knows its own). */
  readonly consoleUrl?: string | undefined;
  /** The sender's retry timing and fetch (tests). */
  readonly sending?: Omit<HttpNotificationSenderOptions, 'urls' | 'secret'>;
  readonly log?: NotifierDeps['log'];
}

export function notifierFor(settings: NotifySettings, place: NotifierPlace): Notifier | undefined {
  if (settings.urls.length === 0) return undefined;
  const sender = createHttpNotificationSender({
    urls: settings.urls,
    secret: place.secret,
    clock: place.clock,
    ...place.sending,
  });
  return createNotifier({
    store: place.store,
    sender,
    reminders: place.reminders,
    clock: place.clock,
    consoleUrl: place.consoleUrl ?? settings.consoleUrl,
    ...(place.log === undefined ? {} : { log: place.log }),
  });
}
