/**
 * Admission's records kept in memory (shared/ports/admission.ts), as the table keeps them: the record replaced whole
 * over the version read only, the queue ordered by its sort key (`<createdAt>#<runId>`). For the simulation and for
 * tests that want admission without a table.
 */
import { type AdmissionState, byAge, type QueuedRun } from '../../engine/admission.ts';
import { AdmissionConflictError } from '../../errors.ts';
import type { AdmissionStore } from '../../ports/admission.ts';

export function createMemoryAdmissionStore(): AdmissionStore {
  const records = new Map<string, AdmissionState>();
  const queues = new Map<string, Map<string, QueuedRun>>();
  const queueOf = (tenant: string): Map<string, QueuedRun> => {
    let queue = queues.get(tenant);
    if (queue === undefined) {
      queue = new Map();
      queues.set(tenant, queue);
    }
    return queue;
  };
  const keyOf = (run: QueuedRun): string => `${run.createdAt}#${run.runId}`;
  return {
    async getAdmission(tenant) {
      const record = records.get(tenant);
      return record === undefined
        ? { version: 0, running: [] }
        : { version: record.version, running: [...record.running] };
    },
    async putAdmission(tenant, version, running) {
      if ((records.get(tenant)?.version ?? 0) !== version) throw new AdmissionConflictError(tenant, version);
      records.set(tenant, { version: version + 1, running: [...running] });
    },
    async enqueueRun(tenant, run) {
      queueOf(tenant).set(keyOf(run), { runId: run.runId, createdAt: run.createdAt });
    },
    async dequeueRun(tenant, run) {
      queueOf(tenant).delete(keyOf(run));
    },
    async listQueue(tenant, limit) {
      return [...queueOf(tenant).values()].sort(byAge).slice(0, limit);
    },
  };
}
