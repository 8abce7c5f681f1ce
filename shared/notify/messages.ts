/**
 * The approval notifications, as a receiver gets them: pure functions of an approval record, a type and the time.
 * The body follows the Standard Webhooks payload shape (`type`, `timestamp`, `data`) and carries a top-level `text`
 * (Slack's incoming-webhook field), so a receiver can forward it to a chat as it is.
 *
 * Types: `approval.requested`, `approval.reminder` (at 80 % of the time to the deadline, still pending), and one
 * outcome: `approval.decided` (approved, rejected or edited), `approval.expired` (the deadline passed),
 * `approval.superseded` (an invalidation or a plan revision moved its step on) or `approval.closed` (anything else
 * that ended the wait: a cancel, the run's end, a failure).
 */
import { createHash } from 'node:crypto';
import { DEADLINE_COMMENT } from '../engine/run/rules/approvals.ts';
import { clipMessage } from '../plan/bounded-text.ts';
import type { OutgoingNotification } from '../ports/notifications.ts';
import type { ApprovalRecord } from '../ports/records/approvals.ts';

export const NOTIFICATION_TYPES = [
  'approval.requested',
  'approval.reminder',
  'approval.decided',
  'approval.expired',
  'approval.superseded',
  'approval.closed',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export type OutcomeType = Exclude<NotificationType, 'approval.requested' | 'approval.reminder'>;

/** The reminder goes out at this share of the time between the request and its deadline. */
export const REMINDER_AT = 0.8;
/** A question in a notification is cut here (the console shows it whole). */
export const QUESTION_CHARS = 1_000;

/** When a pending approval's reminder is due: createdAt + 80 % of (deadline − createdAt). */
export function reminderDue(approval: Pick<ApprovalRecord, 'createdAt' | 'deadline'>): Date {
  const created = Date.parse(approval.createdAt);
  const deadline = Date.parse(approval.deadline);
  return new Date(created + Math.max(0, deadline - created) * REMINDER_AT);
}

/** The outcome of an approval that no longer waits; undefined while it is pending. */
export function outcomeOf(approval: ApprovalRecord): OutcomeType | undefined {
  if (approval.status === 'pending') return undefined;
  if (approval.status !== 'expired') return 'approval.decided';
  if (approval.comment?.startsWith('superseded') === true) return 'approval.superseded';
  // Closed by its wait's timeout: the machine's clock started the wait a moment before the deadline was recorded.
  if (approval.comment === DEADLINE_COMMENT) return 'approval.expired';
  const decided = approval.decidedAt === undefined ? Number.NaN : Date.parse(approval.decidedAt);
  return decided >= Date.parse(approval.deadline) ? 'approval.expired' : 'approval.closed';
}

/**
 * The message id of one notification: the same for every try and every redelivery of the event that caused it, so
 * a receiver that remembers ids (as the specification asks) takes it once.
 */
export function messageIdOf(approvalId: string, type: NotificationType): string {
  const digest = createHash('sha256').update(`${approvalId}#${type}`, 'utf8').digest('base64url');
  return `msg_${digest.slice(0, 27)}`;
}

/** The console page where the approval is decided (its run, the step selected; a revision: the inbox). */
export function deepLinkOf(consoleUrl: string | undefined, approval: ApprovalRecord): string | undefined {
  if (consoleUrl === undefined) return undefined;
  const base = consoleUrl.replace(/#.*$/, '');
  if (approval.kind === 'revision') return `${base}#/approvals`;
  return `${base}#/runs/${encodeURIComponent(approval.runId)}?step=${encodeURIComponent(approval.stepId)}`;
}

const SUMMARY: Readonly<Record<NotificationType, string>> = {
  'approval.requested': 'Approval requested',
  'approval.reminder': 'Reminder: approval still pending',
  'approval.decided': 'Approval decided',
  'approval.expired': 'Approval expired',
  'approval.superseded': 'Approval no longer needed (superseded)',
  'approval.closed': 'Approval closed',
};

function textOf(type: NotificationType, approval: ApprovalRecord, link: string | undefined): string {
  const where = `run ${approval.runId}, step ${approval.stepId}`;
  const question = clipMessage(approval.question, 300);
  const lines = [`${SUMMARY[type]}: ${question} (${where})`];
  if (type === 'approval.requested' || type === 'approval.reminder') lines.push(`Decide by ${approval.deadline}.`);
  if (type === 'approval.decided')
    lines.push(`${approval.status}${approval.decidedBy ? ` by ${approval.decidedBy}` : ''}.`);
  if ((type === 'approval.closed' || type === 'approval.superseded') && approval.comment) lines.push(approval.comment);
  if (link !== undefined) lines.push(link);
  return lines.join('\n');
}

/** The notification of `type` about `approval`, made at `at`. */
export function notificationOf(
  type: NotificationType,
  approval: ApprovalRecord,
  options: { readonly at: Date; readonly consoleUrl?: string | undefined },
): OutgoingNotification {
  const link = deepLinkOf(options.consoleUrl, approval);
  const outcome = type !== 'approval.requested' && type !== 'approval.reminder';
  const data = {
    approvalId: approval.approvalId,
    runId: approval.runId,
    stepId: approval.stepId,
    generation: approval.generation,
    kind: approval.kind,
    question: clipMessage(approval.question, QUESTION_CHARS),
    createdAt: approval.createdAt,
    deadline: approval.deadline,
    status: approval.status,
    ...(link === undefined ? {} : { link }),
    ...(outcome && approval.decidedAt !== undefined ? { decidedAt: approval.decidedAt } : {}),
    ...(outcome && approval.decidedBy !== undefined ? { decidedBy: approval.decidedBy } : {}),
    ...(outcome && approval.comment !== undefined ? { reason: clipMessage(approval.comment, QUESTION_CHARS) } : {}),
  };
  return {
    id: messageIdOf(approval.approvalId, type),
    type,
    body: { type, timestamp: options.at.toISOString(), data, text: textOf(type, approval, link) },
  };
}
