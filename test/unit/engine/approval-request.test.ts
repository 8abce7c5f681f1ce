import { describe, expect, it } from 'vitest';
import { recordedReply } from '../../../shared/engine/approval-request.ts';
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
