/**
 * What a request for a person's decision does with the approval record already at its id (an id is deterministic
 * per step generation, kind, attempt and request number). Step Functions hands a retried callback Task a new task
 * token, so a wait whose first request landed but whose answer was lost (a crash after the handler's work, a store
 * timeout on the put) comes back with another token for the same request. The person must be asked once, and a
 * decision already given must count: the retried wait takes the pending record over, or is answered with the
 * decision recorded on it.
 */
import type { ApprovalRecord } from '../ports/store.ts';

export type ApprovalRequestMove =
  /** Nothing at this id yet: create the request here. */
  | { readonly kind: 'create' }
  /** The record holds this wait's token: this request's own (a repeat of the same invocation). */
  | { readonly kind: 'mine' }
  /** Pending under an earlier wait of the same request: hand it to this wait's token, the person asked once. */
  | { readonly kind: 'take-over' }
  /** Decided while its wait was being retried: answer this wait with that decision instead of asking again. */
  | { readonly kind: 'answer'; readonly reply: DecisionReply }
  /** Closed without a decision (expired, replaced): the request goes on to the next id. */
  | { readonly kind: 'next' };

/** What a waiting step is answered with (the API's SendTaskSuccess payload). */
export interface DecisionReply {
  readonly decision: 'approve' | 'reject' | 'edit';
  readonly output?: unknown;
  readonly comment?: string;
  readonly by: string;
}

const DECISIONS = { approved: 'approve', rejected: 'reject', edited: 'edit' } as const;

/** The reply a person's recorded decision gave (or would have given) the step that waited for it. */
export function recordedReply(approval: ApprovalRecord): DecisionReply | undefined {
  if (approval.status === 'pending' || approval.status === 'expired') return undefined;
  const decision = DECISIONS[approval.status];
  return {
    decision,
    ...(approval.output === undefined || decision === 'reject' ? {} : { output: approval.output }),
    ...(approval.comment === undefined ? {} : { comment: approval.comment }),
    by: approval.decidedBy ?? 'unknown',
  };
}

export function approvalRequestMove(existing: ApprovalRecord | undefined, taskToken: string): ApprovalRequestMove {
  if (existing === undefined) return { kind: 'create' };
  if (existing.taskToken === taskToken) return { kind: 'mine' };
  if (existing.status === 'pending') return { kind: 'take-over' };
  const reply = recordedReply(existing);
  return reply === undefined ? { kind: 'next' } : { kind: 'answer', reply };
}
