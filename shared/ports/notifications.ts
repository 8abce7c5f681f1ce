/**
 * What the approval notifier (shared/notify/notifier.ts) needs from its place: somewhere to send a signed message,
 * and a way to be called back later for a reminder. Deployed: HTTPS POSTs from the notifier Lambda and EventBridge
 * Scheduler one-shot schedules; embedded: the same HTTP sender and in-process timers.
 */

/** One message: its Standard Webhooks id (the same on every retry and redelivery of it) and its JSON body. */
export interface OutgoingNotification {
  readonly id: string;
  readonly type: string;
  readonly body: Readonly<Record<string, unknown>>;
}

export interface NotificationSender {
  /** Delivers to every configured receiver, with the sender's own retries; throws NotificationDeliveryError. */
  send(notification: OutgoingNotification): Promise<void>;
}

export interface ReminderScheduler {
  /**
   * Calls the notifier's `remind(approvalId)` at `at` (or at once when it has passed). Scheduling the same approval
   * twice is harmless: at most one reminder is sent anyway.
   */
  schedule(approvalId: string, at: Date): Promise<void>;
}
