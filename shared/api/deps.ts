/**
 * What the API needs from the rest of cairn. Everything is a port or a plain function, so the same app runs in
 * Lambda (DynamoDB, Step Functions), in the embedded stack (dynalite, aws-local-stepfunctions) and in tests (fakes).
 */
import type { ConsoleSettings } from '../config/settings.ts';
import type { RunSettings } from '../engine/run/state.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { Plan } from '../plan/schema.ts';
import type { PlanLimits } from '../plan/validate.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { Executions } from '../ports/executions.ts';
import type { Mailbox } from '../ports/mailbox.ts';
import type { Store } from '../ports/store.ts';
import type { WebhookConfig } from '../ports/webhooks.ts';
import type { Admission } from '../services/admission.ts';
import type { PlanJobs } from '../services/plan-jobs.ts';
import type { AuthConfig, AuthVariables } from './auth.ts';
import type { FeedSettings } from './event-feed.ts';
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
  /**
   * The runs' mailboxes: every command to a run (cancel, a decision, an invalidation, a person's action on a
   * compensation) goes to its decider, whose answer is the truth the API passes on.
   */
  readonly mailbox: Mailbox;
  /**
   * The tenants' running slots (shared/services/admission.ts): with a bound, a new run is queued and starts when
   * admitted; absent or unbounded, it starts at once.
   */
  readonly admission?: Admission | undefined;
  /**
   * How long a cancel or an invalidation waits for its decision before the API answers 202 with the command's
   * status (`GET /runs/{id}/commands/{commandId}`); default DEFAULT_DECISION_WAIT_MS.
   */
  readonly decisionWaitMs?: number;
  /** The settings a run's decider keeps (what a replan refusal is judged by before a replan job is made). */
  readonly runSettings: RunSettings;
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
   * How `GET /runs/{id}/events?follow=1` is served (event-feed.ts): absent, as deployed (a long poll, no stream);
   * the embedded server streams server-sent events.
   */
  readonly eventFeed?: FeedSettings;
}

export type ApiEnv = { Variables: AuthVariables };

/** Mode defaults: a direct target means DIRECT, otherwise DECOMPOSE. */
export const modeOf = (body: { mode?: PlanMode | undefined; directTarget?: string | undefined }): PlanMode =>
  body.mode ?? (body.directTarget === undefined ? 'DECOMPOSE' : 'DIRECT');
