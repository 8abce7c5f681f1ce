/**
 * What admission keeps per tenant (shared/engine/admission.ts decides with it, shared/services/admission.ts writes
 * it): the admission record (a version and the runs holding a slot) and the queue, one entry per waiting run, oldest
 * first. Part of the store port: every adapter keeps them beside the runs.
 */
import type { AdmissionState, QueuedRun } from '../engine/admission.ts';

export interface AdmissionStore {
  /** The tenant's admission record (ConsistentRead: it gates the decision); version 0 and nothing running if none. */
  getAdmission(tenant: string): Promise<AdmissionState>;
  /**
   * Writes the record at `version` + 1 over `version` only (0: over no record). Another writer's version first:
   * AdmissionConflictError, naming the tenant and the version this writer read.
   */
  putAdmission(tenant: string, version: number, running: readonly string[]): Promise<void>;
  /** Puts a run in the tenant's queue (idempotent: a repeat is one entry). */
  enqueueRun(tenant: string, run: QueuedRun): Promise<void>;
  /** Takes a run out of the queue (no error when it is not there). */
  dequeueRun(tenant: string, run: QueuedRun): Promise<void>;
  /** The tenant's queue, oldest first, at most `limit` entries (ConsistentRead: a run queued a moment ago is seen). */
  listQueue(tenant: string, limit: number): Promise<QueuedRun[]>;
}
