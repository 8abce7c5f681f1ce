import { describe, expect, it } from 'vitest';
import { approvalRequestMove, recordedReply } from '../../../shared/engine/approval-request.ts';
import type { ApprovalRecord } from '../../../shared/ports/store.ts';

const approval = (fields: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  approvalId: 'r.G.g1.approval.a1.1',
  runId: 'r',
  stepId: 'G',
  generation: 1,
  kind: 'approval',
  status: 'pending',
  question: 'May G go ahead?',
  taskToken: 'first-token',
  createdAt: '2026-12-02T00:00:00.000Z',
  deadline: '2026-12-02T01:00:00.000Z',
  ...fields,
});

describe('approvalRequestMove', () => {
  it('creates the request when nothing is at its id', () => {
    expect(approvalRequestMove(undefined, 't')).toEqual({ kind: 'create' });
  });

  it('finds its own request when the record holds its token', () => {
    expect(approvalRequestMove(approval(), 'first-token')).toEqual({ kind: 'mine' });
  });

  it('takes a pending request over when a retried wait comes with a new token', () => {
    expect(approvalRequestMove(approval(), 'retry-token')).toEqual({ kind: 'take-over' });
  });

  it('answers the retried wait with a decision given on the request meanwhile', () => {
    const rejected = approval({ status: 'rejected', decidedBy: 'ann', comment: 'no', output: { x: 1 } });
    expect(approvalRequestMove(rejected, 'retry-token')).toEqual({
      kind: 'answer',
      reply: { decision: 'reject', comment: 'no', by: 'ann' },
    });
  });

  it('goes on to the next id when the request was closed without a decision', () => {
    expect(approvalRequestMove(approval({ status: 'expired' }), 'retry-token')).toEqual({ kind: 'next' });
  });
});

describe('recordedReply', () => {
  it('gives an edit with its output, as the API answered it', () => {
    expect(recordedReply(approval({ status: 'edited', decidedBy: 'bo', output: { draft: 'x' } }))).toEqual({
      decision: 'edit',
      output: { draft: 'x' },
      by: 'bo',
    });
  });

  it('gives nothing for a request nobody decided', () => {
    expect(recordedReply(approval())).toBeUndefined();
    expect(recordedReply(approval({ status: 'expired' }))).toBeUndefined();
  });
});
