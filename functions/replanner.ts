/**
 * The replanner Lambda: the target of the StepFailedToReplanner rule (shared/events/bus-rules.ts). The EventBridge
 * event (source `cairn`, detail-type `StepFailed`, detail checked against the event catalog) names a final step
 * failure; the replanner service answers it (a revision, a pause for a person, or the failure stands). Delivery is at
 * least once and out of order: the service takes each failure once and ignores stale ones. A malformed event is a
 * ValidationError (EventBridge retries it, then dead-letters it for a person to look at).
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN, CAIRN_EVENT_BUS_NAME (required);
 * CAIRN_CATALOG_FILE or CAIRN_CATALOG, CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH, CAIRN_MAX_REPLANS (default 3),
 * CAIRN_RUN_DEADLINE_SECONDS (the deadline of a reopened run), CAIRN_PLANNER_MODEL_ID or CAIRN_MODEL_ID (Bedrock;
 * absent: the HTN planner).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { createBedrockPlanModel, defaultBedrockClient } from '../shared/adapters/aws/bedrock-plan-model.ts';
import { sfnExecutionsFromEnv } from '../shared/adapters/aws/sfn-executions.ts';
import { catalogFromEnv, type Env, plannerModelId, storeFromEnv } from '../shared/api/lambda-support.ts';
import { ValidationError } from '../shared/errors.ts';
import { parseEventDetail } from '../shared/events/catalog.ts';
import { createHtnPlanModel } from '../shared/planner/htn/model.ts';
import type { MetricsSink } from '../shared/ports/metrics.ts';
import type { PlanModel } from '../shared/ports/plan-model.ts';
import { createReplanner, type Replanner, type ReplanOutcome } from '../shared/services/replanner.ts';
import { coordinatorConfigFromEnv } from './coordinator.ts';
import { observability, observe } from './observability.ts';

export interface ReplannerHandlerDeps {
  readonly replanner: Pick<Replanner, 'onStepFailed'>;
}

/** What arrives: an EventBridge event (or the embedded bus's identical envelope). */
const envelopeSchema = z.object({ 'detail-type': z.string(), source: z.string().optional(), detail: z.unknown() });

export type ReplannerAnswer = ReplanOutcome | { readonly outcome: 'ignored'; readonly why: 'not_final' };

function invalid(message: string): ValidationError {
  return new ValidationError(`replanner event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
}

export function createHandler(deps: ReplannerHandlerDeps) {
  return async (event: unknown): Promise<ReplannerAnswer> => {
    const envelope = envelopeSchema.safeParse(event);
    if (!envelope.success) throw invalid('not an EventBridge event with a detail-type and a detail');
    const type = envelope.data['detail-type'];
    if (type !== 'StepFailed') throw invalid(`detail-type ${type} is not StepFailed`);
    const parsed = parseEventDetail('StepFailed', envelope.data.detail);
    if (!parsed.ok) throw invalid(parsed.message);
    // The rule only routes final failures; a retry on its way is none of the replanner's business.
    if (!parsed.detail.final) return { outcome: 'ignored', why: 'not_final' };
    const { runId, stepId, generation } = parsed.detail;
    return deps.replanner.onStepFailed({ runId, stepId, generation });
  };
}

/** The HTN method library by default; Amazon Bedrock when a planner model id is configured. */
export function planModelFromEnv(env: Env): PlanModel {
  const modelId = plannerModelId(env);
  return modelId === undefined
    ? createHtnPlanModel()
    : createBedrockPlanModel({ client: defaultBedrockClient(), modelId });
}

/** The replanner with AWS adapters, from the environment (the API builds the same one for manual replans). */
export function replannerFromEnv(env: Env, metrics?: MetricsSink): Replanner {
  return createReplanner({
    store: storeFromEnv(env),
    executions: sfnExecutionsFromEnv(env),
    catalog: catalogFromEnv(env),
    clock: () => new Date(),
    newId: randomUUID,
    config: coordinatorConfigFromEnv(env),
    model: planModelFromEnv(env),
    ...(metrics === undefined ? {} : { metrics }),
  });
}

export function defaultDeps(env: Env = process.env): ReplannerHandlerDeps {
  return { replanner: replannerFromEnv(env, observability().sink) };
}

// Built on the first invocation, so importing createHandler (tests, the embedded runtime) reads no environment.
let built: ReturnType<typeof createHandler> | undefined;
export const handler = observe('replanner', (event: unknown): Promise<ReplannerAnswer> => {
  built ??= createHandler(defaultDeps());
  return built(event);
});
