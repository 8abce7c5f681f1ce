/**
 * The heavy part of `POST /plans/validate` and `POST /runs`, decided from the body's bytes alone: decode (UTF-8,
 * strict JSON), check the body's form, validate the plan and, for a run, stamp it and hash the request. A 1 MB plan
 * takes a few hundred milliseconds of this, all CPU; it is the one piece of a request that a client can make as
 * long as it likes, so it is kept apart from the routes that store and start things.
 *
 * The functions here are pure (no I/O, no clock): the same ones run in the API's process (a Lambda serves one
 * request at a time, so nothing waits behind them there) or in a pool of worker threads beside the embedded server
 * (infra/local/plan-check-pool.ts), whose event loop also answers `/health` and drives every run. Either way the
 * answer is the same value, or the same ApiError: across a thread it travels as a `PlanRequestOutcome`.
 */
import { createHash } from 'node:crypto';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { canonicalJson } from '../engine/replan/step-definition.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { PlanIssue } from '../plan/issues.ts';
import type { Plan } from '../plan/schema.ts';
import { stampPlan } from '../plan/stamp.ts';
import type { PlanLimits } from '../plan/validate.ts';
import { anyObject, jsonFromBytes, parseWith, planRequestBody, submitBody, validateBody } from './body.ts';
import { ApiError, isApiError } from './errors.ts';
import { checkPlan, validateUntrusted } from './plan-check.ts';

/** What an Idempotency-Key's claim remembers of the request: SHA-256 of the body as canonical JSON (sorted keys). */
export const runRequestHash = (body: unknown): string =>
  `sha256:${createHash('sha256').update(canonicalJson(body), 'utf8').digest('hex')}`;

/** `POST /plans/validate`'s verdict. */
export type ValidateAnswer = { readonly valid: true } | { readonly valid: false; readonly errors: PlanIssue[] };

type PlanRequestBody = ReturnType<typeof planRequestBody.parse>;

/** `POST /runs`'s body, judged: a submitted plan, valid and stamped, or a request to plan an objective. */
export type SubmitAnswer = (
  | { readonly kind: 'plan'; readonly plan: Plan; readonly planStamp: string }
  | { readonly kind: 'objective'; readonly request: PlanRequestBody }
) & {
  /** runRequestHash of the body, when asked for (the request carried an Idempotency-Key). */
  readonly requestHash?: string;
};

export interface PlanRequestContext {
  readonly catalog: Catalog;
  readonly limits: PlanLimits;
}

export function decideValidateRequest(bytes: Uint8Array, context: PlanRequestContext): ValidateAnswer {
  const body = jsonFromBytes(bytes, validateBody);
  const result = checkPlan(body.plan, context.catalog, context.limits, body.generated ?? false);
  return result.valid ? { valid: true } : { valid: false, errors: result.errors };
}

export function decideSubmitRequest(bytes: Uint8Array, context: PlanRequestContext, hash: boolean): SubmitAnswer {
  const raw = jsonFromBytes(bytes, anyObject);
  const requestHash = hash ? { requestHash: runRequestHash(raw) } : {};
  if (!Object.hasOwn(raw, 'plan'))
    return { kind: 'objective', request: parseWith(planRequestBody, raw), ...requestHash };
  const { plan } = parseWith(submitBody, raw);
  // Untrusted until proven otherwise. A valid plan is stamped, so the run machine does not validate it again
  // against the same catalog and limits.
  const submitted = validateUntrusted(plan, context.catalog, context.limits);
  return {
    kind: 'plan',
    plan: submitted,
    planStamp: stampPlan(submitted, context.catalog, context.limits),
    ...requestHash,
  };
}

/** One piece of work for whoever checks plan requests: the route's kind and the body's bytes. */
export type PlanRequestJob =
  | { readonly kind: 'validate'; readonly bytes: Uint8Array }
  | { readonly kind: 'submit'; readonly bytes: Uint8Array; readonly hash: boolean };

export interface RefusedRequest {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
  readonly extra?: Readonly<Record<string, unknown>>;
  readonly retryAfterSeconds?: number;
}

/** A job's answer as plain data (it crosses a thread): the value, or the ApiError's parts. */
export type PlanRequestOutcome =
  | { readonly ok: true; readonly value: ValidateAnswer | SubmitAnswer }
  | { readonly ok: false; readonly refused: RefusedRequest };

/** Runs a job; an ApiError becomes a refusal, anything else (a defect) is thrown. */
export function runPlanRequestJob(job: PlanRequestJob, context: PlanRequestContext): PlanRequestOutcome {
  try {
    const value =
      job.kind === 'validate'
        ? decideValidateRequest(job.bytes, context)
        : decideSubmitRequest(job.bytes, context, job.hash);
    return { ok: true, value };
  } catch (error) {
    if (!isApiError(error)) throw error;
    const { status, code, message, details, extra } = error;
    return {
      ok: false,
      refused: { status, code, message, ...(details === undefined ? {} : { details }), extra },
    };
  }
}

/** The outcome's value, or its refusal thrown again as the ApiError it was. */
export function outcomeValue(outcome: PlanRequestOutcome): ValidateAnswer | SubmitAnswer {
  if (outcome.ok) return outcome.value;
  const { status, code, message, details, extra, retryAfterSeconds } = outcome.refused;
  throw new ApiError(status, code, message, {
    ...(details === undefined ? {} : { details }),
    ...(extra === undefined ? {} : { extra }),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

/**
 * Who runs the jobs. The API asks this port; without one (a Lambda) the jobs run inline. The embedded server gives
 * a pool of worker threads, which may also refuse a job it has no room for (503 E_OVERLOADED with Retry-After).
 */
export interface PlanRequestChecks {
  run(job: PlanRequestJob): Promise<PlanRequestOutcome>;
}

export const inlinePlanRequestChecks = (context: PlanRequestContext): PlanRequestChecks => ({
  run: async (job) => runPlanRequestJob(job, context),
});

const checksOf = (deps: PlanRequestContext & { readonly planChecks?: PlanRequestChecks | undefined }) =>
  deps.planChecks ?? inlinePlanRequestChecks(deps);

export async function validateRequest(
  deps: PlanRequestContext & { readonly planChecks?: PlanRequestChecks | undefined },
  bytes: Uint8Array,
): Promise<ValidateAnswer> {
  return outcomeValue(await checksOf(deps).run({ kind: 'validate', bytes })) as ValidateAnswer;
}

export async function submitRequest(
  deps: PlanRequestContext & { readonly planChecks?: PlanRequestChecks | undefined },
  bytes: Uint8Array,
  hash: boolean,
): Promise<SubmitAnswer> {
  return outcomeValue(await checksOf(deps).run({ kind: 'submit', bytes, hash })) as SubmitAnswer;
}
