/**
 * What a planning job says to whoever polls it. A worker records every outcome it reaches, but a worker can be lost
 * without a word (a Lambda timeout or crash after Lambda's own retries): a job still pending long after the longest
 * a worker may run is reported failed, retryable, so that a caller stops polling and asks again.
 */
import type { PlanJobRecord } from '../ports/plan-jobs.ts';

/** The code of a job whose worker never answered. */
export const PLAN_JOB_LOST_CODE = 'E_PLAN_JOB_LOST';

/**
 * The job as a poll sees it at `now`: as stored, or failed with E_PLAN_JOB_LOST once it has been pending for more
 * than `lostAfterSeconds` (the worker's timeout times its tries, with a margin).
 */
export function planJobAsSeen(job: PlanJobRecord, now: Date, lostAfterSeconds: number): PlanJobRecord {
  if (job.status !== 'pending') return job;
  const pendingMs = now.getTime() - Date.parse(job.createdAt);
  if (!(pendingMs > lostAfterSeconds * 1000)) return job;
  return {
    ...job,
    status: 'failed',
    error: {
      code: PLAN_JOB_LOST_CODE,
      message: `no worker answered this job within ${lostAfterSeconds} s; ask again`,
      retryable: true,
    },
  };
}
