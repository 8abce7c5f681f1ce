/**
 * Planning jobs (shared/ports/plan-jobs.ts): the API's side stores a `pending` job and dispatches it, answering at
 * once; the worker's side (the planner or replanner Lambda, or the embedded runtime in process) runs the model call
 * and records the outcome once. An outcome the synchronous route would have answered with an error status is a
 * failed job with that code; an unexpected failure is `E_INTERNAL`, logged here, its words kept out of the job.
 */
import { DEFAULT_TENANT } from '../config/defaults.ts';
import { planJobAsSeen } from '../engine/plan-jobs.ts';
import {
  isCairnError,
  isConflictError,
  isModelError,
  isNotFoundError,
  isPlannerError,
  isValidationError,
} from '../errors.ts';
import { messageOf } from '../plan/bounded-text.ts';
import type { Plan } from '../plan/schema.ts';
import type {
  PlanJobDispatcher,
  PlanJobError,
  PlanJobRecord,
  PlanJobRequest,
  PlanJobResult,
} from '../ports/plan-jobs.ts';
import type { Store } from '../ports/store.ts';

/** Lambda's longest timeout (900 s) for each of an async invocation's three tries, with a margin. */
export const DEFAULT_PLAN_JOB_LOST_AFTER_SECONDS = 3 * 900 + 300;

export interface PlanJobsDeps {
  readonly store: Store;
  readonly dispatcher: PlanJobDispatcher;
  readonly clock: () => Date;
  readonly newId: () => string;
  readonly lostAfterSeconds?: number;
}

export interface PlanJobs {
  /** Stores the job `pending`, as the tenant's (absent: the default tenant's), and hands it to its worker. */
  submit(request: PlanJobRequest, tenant?: string): Promise<PlanJobRecord>;
  /** The job as a poll sees it (a job whose worker was lost is failed, retryable); undefined when unknown. */
  get(jobId: string): Promise<PlanJobRecord | undefined>;
}

export function createPlanJobs(deps: PlanJobsDeps): PlanJobs {
  const lostAfter = deps.lostAfterSeconds ?? DEFAULT_PLAN_JOB_LOST_AFTER_SECONDS;
  return {
    async submit(request, tenant) {
      const job: PlanJobRecord = {
        jobId: deps.newId(),
        ...(tenant === undefined || tenant === DEFAULT_TENANT ? {} : { tenant }),
        request,
        status: 'pending',
        createdAt: deps.clock().toISOString(),
      };
      await deps.store.putPlanJob(job);
      await deps.dispatcher.dispatch({ jobId: job.jobId, kind: request.kind });
      return job;
    },
    async get(jobId) {
      const job = await deps.store.getPlanJob(jobId);
      return job === undefined ? undefined : planJobAsSeen(job, deps.clock(), lostAfter);
    },
  };
}

/** What a worker needs: the store, and the planner or the replanner for the jobs it takes. */
export interface PlanJobWorkerDeps {
  readonly store: Store;
  readonly clock: () => Date;
  readonly planner?: { plan(request: Omit<Extract<PlanJobRequest, { kind: 'plan' }>, 'kind'>): Promise<Plan> };
  readonly replanRun?: (request: {
    runId: string;
    reason: string;
    objective?: string;
    request?: string;
    requestedBy?: string;
  }) => Promise<{ revision?: number; approvalId?: string }>;
}

/** Runs a pending job and records its outcome; a finished or unknown job is left alone. Returns the job after. */
export async function runPlanJob(deps: PlanJobWorkerDeps, jobId: string): Promise<PlanJobRecord | undefined> {
  const job = await deps.store.getPlanJob(jobId);
  if (job?.status !== 'pending') return job;
  let result: PlanJobResult;
  try {
    result = await work(deps, job.request, jobId);
  } catch (error) {
    const why = jobErrorOf(error);
    if (why.code === 'E_INTERNAL') console.error('cairn plan job: unexpected failure', { jobId, error });
    const failed = { status: 'failed', error: why, finishedAt: deps.clock().toISOString() } as const;
    return (await deps.store.finishPlanJob(jobId, failed)) ?? deps.store.getPlanJob(jobId);
  }
  const succeeded = { status: 'succeeded', result, finishedAt: deps.clock().toISOString() } as const;
  return (await deps.store.finishPlanJob(jobId, succeeded)) ?? deps.store.getPlanJob(jobId);
}

async function work(deps: PlanJobWorkerDeps, request: PlanJobRequest, jobId: string): Promise<PlanJobResult> {
  if (request.kind === 'plan') {
    if (!deps.planner) throw new Error('this worker has no planner for plan jobs');
    const { kind: _, ...planRequest } = request;
    return { plan: await deps.planner.plan(planRequest) };
  }
  if (!deps.replanRun) throw new Error('this worker has no replanner for replan jobs');
  const { revision, approvalId } = await deps.replanRun({
    runId: request.runId,
    reason: request.reason,
    ...(request.objective === undefined ? {} : { objective: request.objective }),
    // The job is the request: a job run again (its worker's answer lost) repeats it, another job is another request.
    request: jobId,
    ...(request.requestedBy === undefined ? {} : { requestedBy: request.requestedBy }),
  });
  return {
    ...(revision === undefined ? {} : { revision }),
    ...(approvalId === undefined ? {} : { approvalId }),
  };
}

/** The code and message the synchronous route gave for the same failure (shared/api/errors.ts). */
export function jobErrorOf(error: unknown): PlanJobError {
  const code = (fallback: string): string =>
    isCairnError(error) && typeof error.context.code === 'string' ? error.context.code : fallback;
  // A planner's message may quote the model's plan: the job keeps it bounded (plan/bounded-text.ts).
  if (isPlannerError(error)) return { code: code('E_PLANNER'), message: messageOf(error), retryable: error.retryable };
  if (isConflictError(error)) return { code: code('E_CONFLICT'), message: messageOf(error), retryable: false };
  if (isNotFoundError(error)) return { code: 'E_NOT_FOUND', message: messageOf(error), retryable: false };
  if (isValidationError(error)) return { code: 'E_VALIDATION', message: messageOf(error), retryable: false };
  // The provider's words stay in the log, as the synchronous route kept them out of its answer.
  if (isModelError(error)) return { code: 'E_MODEL', message: 'the planning model failed', retryable: error.retryable };
  return { code: 'E_INTERNAL', message: 'internal error', retryable: isCairnError(error) && error.retryable };
}
