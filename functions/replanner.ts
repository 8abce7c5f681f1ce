/**
 * The replanner Lambda: the target of the StepFailedToReplanner, BudgetExhaustedToReplanner and
 * BudgetRaisedToReplanner rules (shared/events/bus-rules.ts: a final step failure, a plan budget exhausted under
 * onExhausted replan, a person's raised replan limit), and the worker
 * of a person's replan (`POST /runs/{id}/replan`): an asynchronous invocation with `{ planJobId }` (plan-jobs.ts). The EventBridge
 * event (source `cairn`, detail-type `StepFailed`, detail checked against the event catalog) names a final step
 * failure; the replanner service answers it (a revision, a pause for a person, or the failure stands). Delivery is at
 * least once and out of order: the service takes each failure once and ignores stale ones. A malformed event is a
 * ValidationError (EventBridge retries it, then dead-letters it for a person to look at).
 *
 * Environment (read by shared/config/settings.ts): CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN
 * (required); CAIRN_CATALOG_FILE or CAIRN_CATALOG, CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH, CAIRN_MAX_REPLANS,
 * CAIRN_RUN_DEADLINE_SECONDS (the deadline of a reopened run), CAIRN_PLANNER_MODEL_ID or CAIRN_MODEL_ID (Bedrock;
 * absent: the HTN planner).
 */
import { z } from 'zod';
import type { Env } from '../shared/config/settings.ts';
import { ValidationError } from '../shared/errors.ts';
import { parseEventDetail } from '../shared/events/catalog.ts';
import type { Store } from '../shared/ports/store.ts';
import { runPlanJob } from '../shared/services/plan-jobs.ts';
import type { Replanner, ReplanOutcome } from '../shared/services/replanner.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

export interface ReplannerHandlerDeps {
  readonly replanner: Pick<Replanner, 'onStepFailed' | 'onBudgetExhausted' | 'onLimitRaised' | 'replanRun'>;
  /** Where replan jobs are read and finished; without it a `{ planJobId }` invocation is refused. */
  readonly jobs?: { readonly store: Store; readonly clock: () => Date };
}

/** An asynchronous invocation for a person's replan job (shared/adapters/aws/lambda-plan-jobs.ts). */
const planJobEvent = z.strictObject({ planJobId: z.string().min(1) });

/** What arrives: an EventBridge event (or the embedded bus's identical envelope). */
const envelopeSchema = z.object({ 'detail-type': z.string(), source: z.string().optional(), detail: z.unknown() });

export type ReplannerAnswer =
  | ReplanOutcome
  | { readonly outcome: 'ignored'; readonly why: 'not_final' | 'not_replan' }
  | { readonly planJobId: string; readonly status?: string };

function invalid(message: string): ValidationError {
  return new ValidationError(`replanner event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
}

export function createHandler(deps: ReplannerHandlerDeps) {
  return async (event: unknown): Promise<ReplannerAnswer> => {
    const job = planJobEvent.safeParse(event);
    if (job.success) {
      if (!deps.jobs) throw invalid('this replanner takes no planning jobs');
      const { planJobId } = job.data;
      const replanRun = (request: Parameters<Replanner['replanRun']>[0]) => deps.replanner.replanRun(request);
      const after = await runPlanJob({ ...deps.jobs, replanRun }, planJobId);
      return { planJobId, ...(after === undefined ? {} : { status: after.status }) };
    }
    const envelope = envelopeSchema.safeParse(event);
    if (!envelope.success) throw invalid('not an EventBridge event with a detail-type and a detail');
    const type = envelope.data['detail-type'];
    // A held revision's expiry is the run's decider's (a timer): nothing of the replanner's.
    if (type === 'ApprovalDecided') return { outcome: 'ignored', why: 'not_final' };
    if (type === 'BudgetExhausted') {
      const parsed = parseEventDetail('BudgetExhausted', envelope.data.detail);
      if (!parsed.ok) throw invalid(parsed.message);
      // The rule routes only `replan`; the other policies end the run without a replanner.
      if (parsed.detail.onExhausted !== 'replan') return { outcome: 'ignored', why: 'not_replan' };
      return deps.replanner.onBudgetExhausted({ runId: parsed.detail.runId });
    }
    if (type === 'BudgetRaised') {
      const parsed = parseEventDetail('BudgetRaised', envelope.data.detail);
      if (!parsed.ok) throw invalid(parsed.message);
      if (parsed.detail.limits.maxReplans === undefined) return { outcome: 'ignored', why: 'not_replan' };
      return deps.replanner.onLimitRaised({ runId: parsed.detail.runId });
    }
    if (type !== 'StepFailed')
      throw invalid(`detail-type ${type} is not StepFailed, ApprovalDecided, BudgetExhausted nor BudgetRaised`);
    const parsed = parseEventDetail('StepFailed', envelope.data.detail);
    if (!parsed.ok) throw invalid(parsed.message);
    // The rule only routes final failures; a retry on its way is none of the replanner's business.
    if (!parsed.detail.final) return { outcome: 'ignored', why: 'not_final' };
    const { runId, stepId, generation } = parsed.detail;
    return deps.replanner.onStepFailed({ runId, stepId, generation });
  };
}

/** The replanner of the container's root (the API's manual replans use the same one), built on first invocation. */
export function defaultDeps(env: Env = process.env): ReplannerHandlerDeps {
  const root = lambdaRoot(env);
  return { replanner: root.replanner, jobs: { store: root.store, clock: root.clock } };
}

export const handler = lazyHandler('replanner', () => createHandler(defaultDeps()));
