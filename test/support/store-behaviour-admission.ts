/**
 * The store's admission records (shared/ports/admission.ts), for every adapter: the record written over the version
 * read only (a lost race is AdmissionConflictError naming tenant and version), the queue read oldest first and
 * idempotent both ways, and tenants kept apart.
 */
import { describe, expect, it } from 'vitest';
import { isAdmissionConflictError } from '../../shared/errors.ts';
import type { AdmissionStore } from '../../shared/ports/admission.ts';
import { uniqueId } from './store-fixtures.ts';

const at = (second: number): string => `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

export function describeAdmissionBehaviour(store: () => AdmissionStore): void {
  describe('admission', () => {
    it('reads version 0 with nothing running for a tenant it has no record of', async () => {
      expect(await store().getAdmission(uniqueId('tenant'))).toEqual({ version: 0, running: [] });
    });

    it('writes the record over the version read, and refuses a writer whose version was taken', async () => {
      const tenant = uniqueId('tenant');
      await store().putAdmission(tenant, 0, ['a']);
      expect(await store().getAdmission(tenant)).toEqual({ version: 1, running: ['a'] });
      const lost = await store()
        .putAdmission(tenant, 0, ['b'])
        .catch((error: unknown) => error);
      expect(isAdmissionConflictError(lost)).toBe(true);
      expect(lost).toMatchObject({ retryable: true, context: { tenant, version: 0, code: 'E_ADMISSION_CONFLICT' } });
      await store().putAdmission(tenant, 1, ['a', 'c']);
      expect(await store().getAdmission(tenant)).toEqual({ version: 2, running: ['a', 'c'] });
      await expect(store().putAdmission(tenant, 1, [])).rejects.toMatchObject({ name: 'AdmissionConflictError' });
    });

    it('lets one of two writers of the same version win', async () => {
      const tenant = uniqueId('tenant');
      const results = await Promise.allSettled([
        store().putAdmission(tenant, 0, ['a']),
        store().putAdmission(tenant, 0, ['b']),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect((await store().getAdmission(tenant)).version).toBe(1);
    });

    it('lists the queue oldest first (same instant: by run id), within the limit, and each entry once', async () => {
      const tenant = uniqueId('tenant');
      await store().enqueueRun(tenant, { runId: 'c', createdAt: at(3) });
      await store().enqueueRun(tenant, { runId: 'b', createdAt: at(1) });
      await store().enqueueRun(tenant, { runId: 'a', createdAt: at(1) });
      await store().enqueueRun(tenant, { runId: 'c', createdAt: at(3) });
      expect(await store().listQueue(tenant, 10)).toEqual([
        { runId: 'a', createdAt: at(1) },
        { runId: 'b', createdAt: at(1) },
        { runId: 'c', createdAt: at(3) },
      ]);
      expect((await store().listQueue(tenant, 2)).map((q) => q.runId)).toEqual(['a', 'b']);
    });

    it('takes a run out of the queue, and a second removal is no error', async () => {
      const tenant = uniqueId('tenant');
      const run = { runId: 'a', createdAt: at(1) };
      await store().enqueueRun(tenant, run);
      await store().dequeueRun(tenant, run);
      await store().dequeueRun(tenant, run);
      expect(await store().listQueue(tenant, 10)).toEqual([]);
    });

    it("keeps each tenant's record and queue its own", async () => {
      const acme = uniqueId('acme');
      const globex = uniqueId('globex');
      await store().putAdmission(acme, 0, ['a']);
      await store().enqueueRun(acme, { runId: 'q', createdAt: at(1) });
      expect(await store().getAdmission(globex)).toEqual({ version: 0, running: [] });
      expect(await store().listQueue(globex, 10)).toEqual([]);
    });
  });
}
