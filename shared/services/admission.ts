/**
 * Admission, the shell: per tenant, at most `maxRunningRuns` runs hold a running slot; the others wait `queued` and
 * are admitted oldest first as slots free up. It decides nothing itself (shared/engine/admission.ts does): each pass
 * reads the tenant's record and queue consistently, decides, writes the record over the version it read (another
 * writer first: it reads and decides again), then tells each admitted run to start (`AdmitRun`, through the run's
 * mailbox, so the run's status changes only by its decider) and drops its queue entry.
 *
 * Nothing is lost to a crash:
 * - between the record's write and the runs being told: the admitted runs keep their queue entries, and every later
 *   pass of the tenant tells each queued run that holds a slot again (the decider takes one AdmitRun, a repeat is a
 *   no-op);
 * - between a run's end and the next run's admission: the release is an effect of the decider's RunFinished,
 *   performed after the commit; a batch whose effects failed is delivered again, and whoever loads the run performs
 *   them again (shared/services/runs/shell.ts). A release is idempotent per run id.
 * - between a run's creation and its first pass (the API's request died): the run waits queued until the tenant's
 *   next pass (a run queued or ended), or a retry of the request with its Idempotency-Key passes again.
 */
import {
  type AdmissionChange,
  type AdmissionDecision,
  decideAdmission,
  type QueuedRun,
  queueReadLimit,
} from '../engine/admission.ts';
import { isAdmissionConflictError } from '../errors.ts';
import type { AdmissionStore } from '../ports/admission.ts';
import type { Mailbox } from '../ports/mailbox.ts';

export interface AdmissionDeps {
  readonly store: AdmissionStore;
  /** Where an admitted run is told to start. */
  readonly mailbox: Pick<Mailbox, 'send'>;
  /** Runs of one tenant holding a slot at most; `Infinity` (the default): no bound. */
  readonly maxRunningRuns: number;
  /** A pause between tries after a lost write (tests pass none). */
  readonly pause?: (tries: number) => Promise<void>;
}

export interface Admission {
  /** Whether runs wait for a slot at all (a bound is set). */
  readonly bounded: boolean;
  /**
   * Queues a run its API request created `queued`, and admits what the bound allows: true when this run holds a slot
   * now (it has been told to start).
   */
  enter(tenant: string, run: QueuedRun): Promise<boolean>;
  /** The run ended: its slot and its queue entry go, and the next queued runs are admitted. */
  release(tenant: string, run: QueuedRun): Promise<void>;
  /** A finished run reopened: it takes a slot again, even over the bound. */
  reenter(tenant: string, runId: string): Promise<void>;
}

/** Writes tried per pass before the conflict stands (each lost write means another writer moved the tenant on). */
export const ADMISSION_TRIES = 8;

const jitteredPause = (tries: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * tries));

export function createAdmission(deps: AdmissionDeps): Admission {
  const { store, maxRunningRuns: max } = deps;
  const pause = deps.pause ?? jitteredPause;

  const pass = async (tenant: string, change: AdmissionChange): Promise<AdmissionDecision> => {
    for (let tries = 1; ; tries++) {
      const state = await store.getAdmission(tenant);
      const queue = await store.listQueue(tenant, queueReadLimit(max, state));
      const decision = decideAdmission({ max, state, queue, change });
      if (decision.write) {
        try {
          await store.putAdmission(tenant, state.version, decision.running);
        } catch (error) {
          if (!isAdmissionConflictError(error) || tries >= ADMISSION_TRIES) throw error;
          await pause(tries);
          continue;
        }
      }
      for (const entry of decision.dispatch) {
        await deps.mailbox.send(entry.runId, { kind: 'AdmitRun' });
        await store.dequeueRun(tenant, entry);
      }
      return decision;
    }
  };

  return {
    bounded: Number.isFinite(max),
    async enter(tenant, run) {
      await store.enqueueRun(tenant, run);
      return (await pass(tenant, { kind: 'pass' })).running.includes(run.runId);
    },
    async release(tenant, run) {
      // Without a bound a tenant that never had one has no record: one read, and nothing to free. A record left by
      // an earlier bound is released as ever, so runs it queued are admitted (none wait without a bound).
      if (!Number.isFinite(max) && (await store.getAdmission(tenant)).version === 0) return;
      // The entry goes before the record's write: a pass that read it (and would admit a run that has ended) finds
      // the version moved and decides again without it (shared/engine/admission.ts).
      await store.dequeueRun(tenant, run);
      await pass(tenant, { kind: 'release', runId: run.runId });
    },
    async reenter(tenant, runId) {
      if (!Number.isFinite(max) && (await store.getAdmission(tenant)).version === 0) return;
      await pass(tenant, { kind: 'reenter', runId });
    },
  };
}
