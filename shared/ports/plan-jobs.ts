/**
 * Planning jobs (issue 10, defect 8): a model call that may take longer than an API request may (API Gateway answers
 * after 30 s) runs elsewhere. The API stores a `pending` job and hands its id to the dispatcher; the worker (the
 * planner Lambda for a plan, the replanner Lambda for a person's replan; the same code in process when embedded)
 * runs it and records its outcome on the job, which `GET /plans/{jobId}` answers.
 */
import type { Plan } from '../plan/schema.ts';

/** What a job asks for: a plan for an objective, or a person's revision of a run's plan (reason, new objective). */
export type PlanJobRequest =
  | {
      readonly kind: 'plan';
      readonly objective: string;
      readonly mode: 'DIRECT' | 'DECOMPOSE';
      readonly directTarget?: string;
    }
  | {
      readonly kind: 'replan';
      readonly runId: string;
      readonly reason: string;
      readonly objective?: string;
      /** Who asked (the caller's subject): the revision records it. */
      readonly requestedBy?: string;
    };

export type PlanJobKind = PlanJobRequest['kind'];
export type PlanJobStatus = 'pending' | 'succeeded' | 'failed';

/** Why a job failed: the code and message the synchronous route would have answered with. */
export interface PlanJobError {
  readonly code: string;
  readonly message: string;
  /** True when asking again may succeed (a throttled model, a lost worker). */
  readonly retryable: boolean;
}

/**
 * What a finished job found: the plan (a plan job), or the revision made (a replan; none: a concurrent one won), or
 * the approval the revision waits for.
 */
export interface PlanJobResult {
  readonly plan?: Plan;
  readonly revision?: number;
  /** A replan whose revision adds a mutating target: the approval it waits for (GET /approvals/{id}). */
  readonly approvalId?: string;
}

export interface PlanJobRecord {
  readonly jobId: string;
  /** The tenant of who asked (absent: the default tenant): only that tenant reads the job. */
  readonly tenant?: string;
  readonly request: PlanJobRequest;
  readonly status: PlanJobStatus;
  readonly createdAt: string;
  readonly finishedAt?: string;
  readonly result?: PlanJobResult;
  readonly error?: PlanJobError;
}

/** The outcome a worker records on a pending job. */
export type PlanJobOutcome =
  | { readonly status: 'succeeded'; readonly result: PlanJobResult; readonly finishedAt: string }
  | { readonly status: 'failed'; readonly error: PlanJobError; readonly finishedAt: string };

/**
 * Hands a stored job to its worker without waiting for it: deployed, an asynchronous Lambda invocation (Lambda
 * queues it and retries a failed invocation twice); embedded, the same handler in process, after the request.
 */
export interface PlanJobDispatcher {
  dispatch(job: { readonly jobId: string; readonly kind: PlanJobKind }): Promise<void>;
}
