/**
 * The reply a person's recorded decision gives the step that waited for it (the API's SendTaskSuccess payload), read
 * by the run's decider when it answers a wait or finds a decision already recorded.
 */
import type { ApprovalRecord } from '../ports/store.ts';

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
