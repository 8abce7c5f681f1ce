/**
 * The embedded runtime's reminders (ReminderScheduler): one in-process timer per approval, unref'd so it never
 * keeps the process alive. Nothing is kept beside the store: at boot, `rearm` schedules again the reminder of every
 * approval still pending in it, so on a data directory a restart loses none (one already sent is not sent twice:
 * the notifier remembers what it sent in the store too).
 */
import { DEFAULT_TENANT } from '../../config/defaults.ts';
import { reminderDue } from '../../notify/messages.ts';
import type { ReminderScheduler } from '../../ports/notifications.ts';
import type { Store } from '../../ports/store.ts';

/** setTimeout's longest delay (about 24.8 days); a later reminder waits in steps of it. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const PAGE = 200;

export interface ReminderTimers extends ReminderScheduler {
  /** Who is called when a reminder is due (the notifier's `remind`); set once the notifier exists. */
  onDue(remind: (approvalId: string) => Promise<unknown>): void;
  /** Schedules the reminder of every pending approval in the store (boot); returns how many. */
  /** Every pending approval of these tenants (the stack's: the default, and the tokens file's). */
  rearm(store: Pick<Store, 'listApprovals'>, tenants?: readonly string[]): Promise<number>;
  /** Resolves when every reminder fired so far has been handled (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

export function createReminderTimers(options: { readonly clock?: () => Date } = {}): ReminderTimers {
  const clock = options.clock ?? (() => new Date());
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let remind: ((approvalId: string) => Promise<unknown>) | undefined;
  let closed = false;

  const fire = (approvalId: string): void => {
    timers.delete(approvalId);
    if (closed || remind === undefined) return;
    const call = remind(approvalId)
      .catch((error: unknown) =>
        console.error(`cairn: the reminder of approval ${approvalId} failed: ${String(error)}`),
      )
      .finally(() => running.delete(call));
    running.add(call);
  };

  const arm = (approvalId: string, at: Date): void => {
    if (closed) return;
    clearTimeout(timers.get(approvalId));
    const wait = Math.max(0, at.getTime() - clock().getTime());
    const timer =
      wait > MAX_TIMER_MS
        ? setTimeout(() => arm(approvalId, at), MAX_TIMER_MS)
        : setTimeout(() => fire(approvalId), wait);
    timer.unref();
    timers.set(approvalId, timer);
  };

  return {
    async schedule(approvalId, at) {
      arm(approvalId, at);
    },
    onDue(callback) {
      remind = callback;
    },
    async rearm(store, tenants = [DEFAULT_TENANT]) {
      let count = 0;
      for (const tenant of tenants) {
        let after: { createdAt: string; approvalId: string } | undefined;
        for (;;) {
          const page = await store.listApprovals({
            tenant,
            status: 'pending',
            limit: PAGE,
            ...(after ? { after } : {}),
          });
          for (const approval of page) arm(approval.approvalId, reminderDue(approval));
          count += page.length;
          const last = page.at(-1);
          // A short page is not the end (a page may hold fewer than asked): only an empty one is.
          if (last === undefined) break;
          after = { createdAt: last.createdAt, approvalId: last.approvalId };
        }
      }
      return count;
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
