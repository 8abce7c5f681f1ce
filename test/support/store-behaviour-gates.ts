/**
 * Store behaviour: approvals (stored, read and listed) and idempotency records of side-effecting calls.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../shared/ports/store.ts';
import { anApproval, at, payloadOf, uniqueId } from './store-fixtures.ts';

export function describeGateBehaviour(store: () => Store): void {
  describe('approvals', () => {
    it('stores an approval once and reads it back as written', async () => {
      const approval = anApproval({
        kind: 'review',
        upstreamOutputs: { gather: { n: 1 } },
        heldOutput: { draft: 'x' },
        heldConfidence: 0.4,
      });
      expect(await store().putApproval(approval)).toBe(true);
      expect(await store().putApproval({ ...approval, question: 'again?' })).toBe(false);
      expect(await store().getApproval(approval.approvalId)).toEqual(approval);
      expect(await store().getApproval('no-such-approval')).toBeUndefined();
    });

    it('lists approvals by status, oldest first, and by run', async () => {
      const runId = uniqueId('run');
      const older = anApproval({ runId, createdAt: at(1) });
      const newer = anApproval({ runId, createdAt: at(2), status: 'approved', decidedAt: at(3), decidedBy: 'ana' });
      const elsewhere = anApproval({ createdAt: at(0) });
      for (const approval of [newer, elsewhere, older]) await store().putApproval(approval);

      const ids = (list: { approvalId: string }[]) => list.map((a) => a.approvalId);
      expect(ids(await store().listApprovals({ status: 'pending' }))).toEqual([elsewhere.approvalId, older.approvalId]);
      expect(ids(await store().listApprovals({ status: 'approved' }))).toEqual([newer.approvalId]);
      expect(ids(await store().listApprovals({ runId }))).toEqual([older.approvalId, newer.approvalId]);
      expect(ids(await store().listApprovals({ runId, status: 'pending' }))).toEqual([older.approvalId]);
      expect(await store().listApprovals({ status: 'expired' })).toEqual([]);
    });

    it('lists a run’s approvals of every status, oldest first, and none of another run', async () => {
      const runId = uniqueId('run');
      const first = anApproval({ runId, createdAt: at(2), status: 'rejected', decidedAt: at(4) });
      const second = anApproval({ runId, createdAt: at(3) });
      const elsewhere = anApproval({ createdAt: at(1) });
      for (const approval of [second, elsewhere, first]) await store().putApproval(approval);
      const listed = await store().listRunApprovals(runId);
      expect(listed.map((a) => [a.approvalId, a.status])).toEqual([
        [first.approvalId, 'rejected'],
        [second.approvalId, 'pending'],
      ]);
      expect(await store().listRunApprovals(uniqueId('run'))).toEqual([]);
    });

    it("lists one step's approvals of a run, and none of its other steps", async () => {
      const runId = uniqueId('run');
      const gate = anApproval({ runId, stepId: 'gate', createdAt: at(2) });
      const other = anApproval({ runId, stepId: 'gate2', createdAt: at(1) });
      for (const approval of [gate, other]) await store().putApproval(approval);
      expect((await store().listRunApprovals(runId, { stepId: 'gate' })).map((a) => a.approvalId)).toEqual([
        gate.approvalId,
      ]);
      expect(await store().listRunApprovals(runId, { stepId: 'none' })).toEqual([]);
    });

    it('pages approvals oldest first, each page after the last approval of the one before', async () => {
      const runId = uniqueId('run');
      const approvals = [3, 1, 4, 0, 2].map((i) =>
        anApproval({ runId, createdAt: at(10 + i), ...(i === 1 ? { status: 'approved', decidedAt: at(20) } : {}) }),
      );
      for (const approval of approvals) await store().putApproval(approval);
      const oldestFirst = [...approvals].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      const seen: string[] = [];
      let after: { createdAt: string; approvalId: string } | undefined;
      for (let page = 0; page < 5; page++) {
        const listed = await store().listApprovals({ runId, limit: 2, ...(after ? { after } : {}) });
        seen.push(...listed.map((a) => a.approvalId));
        const last = listed.at(-1);
        if (listed.length < 2 || !last) break;
        after = { createdAt: last.createdAt, approvalId: last.approvalId };
      }
      expect(seen).toEqual(oldestFirst.map((a) => a.approvalId));
      const pending = await store().listApprovals({ status: 'pending', runId, limit: 10 });
      expect(pending.map((a) => a.approvalId)).not.toContain(approvals[1]?.approvalId);
    });
  });

  describe('idempotency records', () => {
    const NOW = 1_900_000_000;

    it('gives the key to the first caller and the in-progress record to the next', async () => {
      const key = uniqueId('idem');
      expect(await store().beginIdempotent(key, NOW + 60, NOW)).toBeUndefined();
      expect(await store().beginIdempotent(key, NOW + 60, NOW + 1)).toEqual({
        key,
        status: 'in_progress',
        expiresAt: NOW + 60,
      });
    });

    it('lets exactly one of several concurrent callers own a key', async () => {
      const key = uniqueId('idem');
      const results = await Promise.all([1, 2, 3, 4, 5].map(() => store().beginIdempotent(key, NOW + 60, NOW)));
      expect(results.filter((r) => r === undefined)).toHaveLength(1);
    });

    it('returns the recorded result once completed, and keeps the first result', async () => {
      const key = uniqueId('idem');
      await store().beginIdempotent(key, NOW + 60, NOW);
      await store().completeIdempotent(key, { entryId: 'e-1' }, NOW + 3600);
      await store().completeIdempotent(key, { entryId: 'e-2' }, NOW + 3600);
      expect(await store().beginIdempotent(key, NOW + 60, NOW + 5)).toEqual({
        key,
        status: 'completed',
        result: { entryId: 'e-1' },
        expiresAt: NOW + 3600,
      });
    });

    it('frees an aborted key for the next caller but never drops a completed record', async () => {
      const key = uniqueId('idem');
      await store().beginIdempotent(key, NOW + 60, NOW);
      await store().abortIdempotent(key);
      expect(await store().beginIdempotent(key, NOW + 60, NOW + 1)).toBeUndefined();
      await store().completeIdempotent(key, { ok: true }, NOW + 3600);
      await store().abortIdempotent(key);
      expect((await store().beginIdempotent(key, NOW + 60, NOW + 2))?.status).toBe('completed');
    });

    it('lets a caller take over an expired in-progress record', async () => {
      const key = uniqueId('idem');
      await store().beginIdempotent(key, NOW + 60, NOW);
      expect(await store().beginIdempotent(key, NOW + 200, NOW + 59)).toMatchObject({ status: 'in_progress' });
      expect(await store().beginIdempotent(key, NOW + 200, NOW + 61)).toBeUndefined();
      expect(await store().beginIdempotent(key, NOW + 200, NOW + 62)).toMatchObject({ expiresAt: NOW + 200 });
    });

    it('keeps a result larger than an item, out of line, and gives it back whole', async () => {
      const key = uniqueId('idem');
      await store().beginIdempotent(key, NOW + 60, NOW);
      const result = payloadOf(700 * 1024);
      await store().completeIdempotent(key, result, NOW + 3600);
      expect(await store().beginIdempotent(key, NOW + 200, NOW + 1)).toEqual({
        key,
        status: 'completed',
        result,
        expiresAt: NOW + 3600,
      });
    });
  });
}
