/**
 * The approval notifier: a consumer of the bus's events, never part of a run's decisions. It reads approvals and
 * keeps only its own memory of what it sent (idempotency records `notify#<approvalId>#<kind>`), so whatever it does
 * or fails to do never touches a run.
 *
 * - ApprovalRequested → `approval.requested`, and a reminder scheduled at 80 % of the time to the deadline.
 * - The reminder → `approval.reminder` while the approval is pending, else its outcome.
 * - ApprovalDecided (decided, or expired/closed when announced) → the outcome.
 * - StepsInvalidated, PlanRevised, RunFinished → the outcome of the run's approvals those decisions closed without
 *   announcing them (superseded, cancelled, the run's end).
 *
 * The events come through NOTIFY_RULE (shared/events/bus-rules.ts). One outcome per approval (`notify#<id>#outcome`), one request, one reminder. A delivery that failed after the
 * sender's retries is logged (`E_NOTIFY_DELIVERY`) and forgotten, so a redelivered event may try it again. A
 * notification another invocation is still sending (its record in progress, for at most NOTIFY_LEASE_SECONDS) fails
 * the invocation with the retryable `NotificationInProgressError`: Lambda's retry finds it sent, or its holder gone
 * and the lease over, and sends it. Answering success there would drop it for good whenever the holder had died.
 */
import { NOTIFY_LEASE_SECONDS } from '../config/defaults.ts';
import { CairnError } from '../errors.ts';
import { parseEventDetail } from '../events/catalog.ts';
import type { NotificationSender, ReminderScheduler } from '../ports/notifications.ts';
import type { ApprovalRecord } from '../ports/records/approvals.ts';
import type { Store } from '../ports/store.ts';
import { isNotificationDeliveryError } from '../webhooks/errors.ts';
import { type NotificationType, notificationOf, outcomeOf, reminderDue } from './messages.ts';

/** What the notifier remembers of a sent notification is kept this long after the approval's deadline. */
const MEMORY_AFTER_DEADLINE_SECONDS = 7 * 86_400;
/** A run-level event looks at approvals closed within this long before it (its own decision closed them). */
const CLOSED_WITH_EVENT_MS = 15 * 60_000;

/** Another invocation holds the notification (sending it, or died sending it): try again once its lease is over. */
export class NotificationInProgressError extends CairnError {
  static readonly code = 'E_NOTIFY_IN_PROGRESS';
  constructor(key: string, leaseSeconds: number) {
    super('NotificationInProgressError', `notification ${key} is being sent by another invocation: try again`, {
      retryable: true,
      context: { code: NotificationInProgressError.code, key, leaseSeconds },
    });
  }
}

export interface NotifierDeps {
  readonly store: Pick<
    Store,
    'getApproval' | 'listRunApprovals' | 'beginIdempotent' | 'completeIdempotent' | 'abortIdempotent'
  >;
  readonly sender: NotificationSender;
  readonly reminders: ReminderScheduler;
  readonly clock: () => Date;
  /** The console's URL, for the deep link; absent: no link. */
  readonly consoleUrl?: string | undefined;
  /** Where a failed delivery is reported (default: console.error as one JSON line). */
  readonly log?: (entry: Readonly<Record<string, unknown>>) => void;
}

export interface BusEvent {
  readonly 'detail-type': string;
  readonly detail: unknown;
  readonly time?: string | undefined;
}

export interface NotifyReport {
  readonly sent: readonly { readonly approvalId: string; readonly type: NotificationType }[];
  readonly failed: readonly { readonly approvalId: string; readonly type: NotificationType; readonly code: string }[];
}

export interface Notifier {
  handle(event: BusEvent): Promise<NotifyReport>;
  remind(approvalId: string): Promise<NotifyReport>;
}

export function createNotifier(deps: NotifierDeps): Notifier {
  const log = deps.log ?? ((entry) => console.error(JSON.stringify(entry)));
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

  /** Sends `type` about `approval` once: the first caller to claim its memory sends; a failure frees it again. */
  async function once(approval: ApprovalRecord, type: NotificationType, report: Report): Promise<void> {
    const kind = type === 'approval.requested' || type === 'approval.reminder' ? type.slice(9) : 'outcome';
    const key = `notify#${approval.approvalId}#${kind}`;
    const now = deps.clock();
    const expiresAt = seconds(new Date(approval.deadline)) + MEMORY_AFTER_DEADLINE_SECONDS;
    // The lease, not the memory: a holder that dies leaves the record in progress only until its lease is over.
    const held = await deps.store.beginIdempotent(key, seconds(now) + NOTIFY_LEASE_SECONDS, seconds(now));
    if (held?.status === 'completed') return;
    if (held !== undefined) throw new NotificationInProgressError(key, NOTIFY_LEASE_SECONDS);
    try {
      await deps.sender.send(notificationOf(type, approval, { at: now, consoleUrl: deps.consoleUrl }));
    } catch (error) {
      await deps.store.abortIdempotent(key).catch(() => undefined);
      const code = isNotificationDeliveryError(error) ? 'E_NOTIFY_DELIVERY' : 'E_NOTIFY';
      log({
        level: 'error',
        message: 'approval notification not delivered',
        code,
        type,
        approvalId: approval.approvalId,
        error: String(error),
      });
      report.failed.push({ approvalId: approval.approvalId, type, code });
      return;
    }
    await deps.store.completeIdempotent(key, { sentAt: now.toISOString() }, Math.max(expiresAt, seconds(now) + 60));
    report.sent.push({ approvalId: approval.approvalId, type });
  }

  async function outcome(approval: ApprovalRecord, report: Report): Promise<void> {
    const type = outcomeOf(approval);
    if (type !== undefined) await once(approval, type, report);
  }

  async function requested(approvalId: string, report: Report): Promise<void> {
    const approval = await deps.store.getApproval(approvalId);
    if (approval === undefined) return;
    await once(approval, 'approval.requested', report);
    if (approval.status !== 'pending') return outcome(approval, report);
    // The reminder is scheduled whether or not the request got through: the person still has to be told.
    await deps.reminders.schedule(approvalId, reminderDue(approval));
  }

  /** Approvals of the run that a decision closed without announcing them (cancel, invalidation, revision, end). */
  async function closedWith(runId: string, time: string | undefined, report: Report): Promise<void> {
    const since = (time === undefined ? deps.clock().getTime() : Date.parse(time)) - CLOSED_WITH_EVENT_MS;
    for (const approval of await deps.store.listRunApprovals(runId)) {
      if (approval.status !== 'expired' || approval.decidedAt === undefined) continue;
      if (Date.parse(approval.decidedAt) >= since) await outcome(approval, report);
    }
  }

  return {
    async handle(event) {
      const report = newReport();
      switch (event['detail-type']) {
        case 'ApprovalRequested': {
          const parsed = parseEventDetail('ApprovalRequested', event.detail);
          if (parsed.ok) await requested(parsed.detail.approvalId, report);
          break;
        }
        case 'ApprovalDecided': {
          const parsed = parseEventDetail('ApprovalDecided', event.detail);
          const approval = parsed.ok ? await deps.store.getApproval(parsed.detail.approvalId) : undefined;
          if (approval !== undefined) await outcome(approval, report);
          break;
        }
        case 'StepsInvalidated':
        case 'PlanRevised':
        case 'RunFinished': {
          const runId = (event.detail as { runId?: unknown } | null)?.runId;
          if (typeof runId === 'string') await closedWith(runId, event.time, report);
          break;
        }
        default:
          break;
      }
      return report;
    },
    async remind(approvalId) {
      const report = newReport();
      const approval = await deps.store.getApproval(approvalId);
      if (approval === undefined) return report;
      if (approval.status !== 'pending') {
        await outcome(approval, report);
        return report;
      }
      const now = deps.clock().getTime();
      const due = reminderDue(approval);
      // Called early (a timer re-armed, a clock a little behind): wait for the real time instead.
      if (now < due.getTime() - 1000) await deps.reminders.schedule(approvalId, due);
      else if (now < Date.parse(approval.deadline)) await once(approval, 'approval.reminder', report);
      return report;
    },
  };
}

interface Report {
  sent: { approvalId: string; type: NotificationType }[];
  failed: { approvalId: string; type: NotificationType; code: string }[];
}
const newReport = (): Report => ({ sent: [], failed: [] });
