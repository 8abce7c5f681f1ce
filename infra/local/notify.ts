/**
 * The approval notifier in the embedded stack: the same notifier the deployed Lambda runs (shared/notify), on the
 * in-process bus with the deployed rule's pattern (NOTIFY_RULE), reminders as in-process timers. With a data
 * directory the reminders of pending approvals are armed again at boot from the store, so a restart loses none.
 */
import type { LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { createReminderTimers } from '../../shared/adapters/local/reminder-timers.ts';
import type { NotifySettings } from '../../shared/config/notify-settings.ts';
import { NOTIFY_RULE } from '../../shared/events/bus-rules.ts';
import { type NotifierPlace, notifierFor } from '../../shared/notify/compose.ts';
import type { Store } from '../../shared/ports/store.ts';
import { subscribeBusRules } from './bus-rules.ts';

export interface LocalNotifier {
  /** Resolves when every reminder that fired so far has been handled. */
  idle(): Promise<void>;
  close(): void;
}

export interface LocalNotifierOptions {
  readonly settings: NotifySettings;
  readonly bus: Pick<LocalEventBus, 'subscribe'>;
  readonly store: Store;
  readonly clock: () => Date;
  /** The embedded console's URL (the deep links), unless CAIRN_CONSOLE_URL says otherwise. */
  readonly consoleUrl: string;
  readonly sending?: NotifierPlace['sending'];
  /** The stack's tenants: whose pending approvals are reminded after a restart. */
  readonly tenants?: readonly string[];
}

/** Starts notifying when URLs are configured; undefined otherwise. */
export async function startLocalNotifier(options: LocalNotifierOptions): Promise<LocalNotifier | undefined> {
  const { settings } = options;
  if (settings.urls.length === 0 || settings.secret === undefined) return undefined;
  const reminders = createReminderTimers({ clock: options.clock });
  const notifier = notifierFor(settings, {
    store: options.store,
    reminders,
    secret: settings.secret,
    clock: options.clock,
    consoleUrl: settings.consoleUrl ?? options.consoleUrl,
    ...(options.sending === undefined ? {} : { sending: options.sending }),
  });
  if (notifier === undefined) return undefined;
  reminders.onDue((approvalId) => notifier.remind(approvalId));
  const unsubscribe = subscribeBusRules(
    options.bus,
    { Notifier: (event) => notifier.handle(event) },
    { rules: [NOTIFY_RULE] },
  );
  await reminders.rearm(options.store, options.tenants);
  return {
    idle: () => reminders.idle(),
    close() {
      unsubscribe();
      reminders.close();
    },
  };
}
