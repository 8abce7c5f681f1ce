/**
 * What the API needs from the rest of cairn. Everything is a port or a plain function, so the same app runs in
 * Lambda (DynamoDB, Step Functions), in the embedded stack (dynalite, aws-local-stepfunctions) and in tests (fakes).
 */
import type { ConsoleSettings } from '../config/settings.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { Plan } from '../plan/schema.ts';
import type { PlanLimits } from '../plan/validate.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { Executions } from '../ports/executions.ts';
import type { Store } from '../ports/store.ts';
import type { WebhookConfig } from '../ports/webhooks.ts';
import type { CompensationActionRequest, CompensationActionResult } from '../services/compensation-actions.ts';
import type { PlanJobs } from '../services/plan-jobs.ts';
import type { RevisionDecision } from '../services/revision-approvals.ts';
import type { AuthConfig, AuthVariables } from './auth.ts';
import type { PlanRequestChecks } from './plan-requests.ts';

export type PlanMode = 'DIRECT' | 'DECOMPOSE';

export interface PlanRequest {
  readonly objective: string;
  readonly mode: PlanMode;
  readonly directTarget?: string;
}

export interface ApiDeps {
  readonly store: Store;
  readonly executions: Executions;
  readonly catalog: Catalog;
  readonly planner: { plan(request: PlanRequest): Promise<Plan> };
  readonly limits: PlanLimits;
  /**
   * Who decodes and validates the bodies of `POST /plans/validate` and `POST /runs` (plan-requests.ts); absent,
   * the request's own process does. The embedded server passes a pool of worker threads, so its event loop (which
   * also answers `/health` and runs every step) never spends a large plan's validation.
   */
  readonly planChecks?: PlanRequestChecks;
  /** The coordinator's cancellation (idempotent): stops the run's executions and records the terminal state. */
  readonly cancelRun: (
    runId: string,
    options?: { readonly requestedBy?: string; readonly compensate?: boolean },
  ) => Promise<void>;
  readonly auth: AuthConfig;
  readonly clock: () => Date;
  readonly newId: () => string;
  /** How the console signs in and where its files are (Settings.console); absent: a pasted token, bundled files. */
  readonly console?: ConsoleSettings;
  /** The conformance pack's ledger; `GET /conformance/ledger` exists only when it is given. */
  readonly ledger?: { entries(): unknown[] };
  /** Where `POST /webhooks/{source}` publishes ResourceChanged; required when `webhooks` is given. */
  readonly events?: EventPublisher;
  /** Signed webhooks; without it every delivery is refused (401), as for a source with no secret. */
  readonly webhooks?: WebhookConfig;
  /**
   * Planning jobs (shared/services/plan-jobs.ts): `POST /plans` in DECOMPOSE mode and `POST /runs/{id}/replan`
   * store one and answer 202 at once, the model call runs in a worker, `GET /plans/{jobId}` answers its outcome.
   * Without it those routes answer 503 (DIRECT planning calls no model and answers at once).
   */
  readonly planJobs?: Pick<PlanJobs, 'submit' | 'get'>;
  /**
   * Whether a person's replan may go ahead (the replanner's checkReplan), asked before the replan job is made:
   * ConflictError for a cancelled run or at the replan limit. Without it `POST /runs/{id}/replan` answers 503.
   */
  readonly checkReplan?: (runId: string) => Promise<void>;
  /**
   * A decision on a revision approval (the replanner's decideRevision): approve makes the held revision current,
   * reject keeps the previous one. ConflictError when already decided or stale. Without it such a decision is 503.
   */
  readonly decideRevision?: (decision: RevisionDecision) => Promise<{ revision?: number }>;
  /**
   * Invalidates a step (or a group) and its downstream closure (the invalidator's invalidateStep): the steps that
   * started a new generation, and whether a finished run reopened. Throws NotFoundError for an unknown step,
   * ConflictError for a run not started, cancelled or being cancelled. Without it `POST /runs/{id}/steps/{stepId}/invalidate` answers 503.
   */
  /**
   * A person's retry or resolution by hand of a compensation that failed (the coordinator's actOnCompensation).
   * Without it `POST /runs/{id}/steps/{stepId}/compensation` answers 503.
   */
  readonly actOnCompensation?: (request: CompensationActionRequest) => Promise<CompensationActionResult>;
  readonly invalidateStep?: (request: {
    runId: string;
    stepId: string;
    reason?: string;
    requestId?: string;
  }) => Promise<{ runId: string; stepIds: readonly string[]; reopened: boolean }>;
}

export type ApiEnv = { Variables: AuthVariables };

/** Mode defaults: a direct target means DIRECT, otherwise DECOMPOSE. */
export const modeOf = (body: { mode?: PlanMode | undefined; directTarget?: string | undefined }): PlanMode =>
  body.mode ?? (body.directTarget === undefined ? 'DECOMPOSE' : 'DIRECT');
