/**
 * The run machine's `PlanRun` task: payload `{ runId }` → `{ runId }`; and the worker of the API's plan jobs: an
 * asynchronous invocation with `{ planJobId }` runs the job and records its plan or error on it (plan-jobs.ts).
 * Reads the run; a submitted plan is left where it is (`submittedPlan` with the API's stamp is the candidate, not
 * written again), otherwise asks the planner (the run's mode and directTarget) and stores `candidatePlan` on the run
 * for `ValidatePlan`, with the planner's validation stamp, so that the plan the planner just validated is not
 * validated again. Only the id travels through Step Functions. Every
 * failure is a CairnError, so the ASL's Catch sends it to `FailRun` with a stable name.
 *
 * Environment (read by shared/config/settings.ts): CAIRN_TABLE_NAME (required); CAIRN_CATALOG_FILE or CAIRN_CATALOG,
 * CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH, CAIRN_PLANNER_MODEL_ID or CAIRN_MODEL_ID (Bedrock; absent: the HTN planner).
 */
import { z } from 'zod';
import type { PlanRequest } from '../shared/api/deps.ts';
import { parsePayload, runTaskPayload } from '../shared/api/lambda-support.ts';
import type { Env } from '../shared/config/settings.ts';
import { ConflictError, isCairnError, NotFoundError, PlannerError } from '../shared/errors.ts';
import type { Plan } from '../shared/plan/schema.ts';
import type { RunRecord, Store } from '../shared/ports/store.ts';
import { runPlanJob } from '../shared/services/plan-jobs.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

export interface PlannerHandlerDeps {
  readonly store: Store;
  readonly planner: { plan(request: PlanRequest): Promise<Plan>; stamp?(plan: Plan): string | undefined };
  readonly clock: () => Date;
}

function requestOf(run: RunRecord): PlanRequest {
  const mode = run.mode === 'DIRECT' ? 'DIRECT' : 'DECOMPOSE';
  return {
    objective: run.objective,
    mode,
    ...(run.directTarget === undefined ? {} : { directTarget: run.directTarget }),
  };
}

async function plan(deps: PlannerHandlerDeps, run: RunRecord): Promise<Pick<RunRecord, 'candidatePlan' | 'planStamp'>> {
  try {
    const candidatePlan = await deps.planner.plan(requestOf(run));
    const planStamp = deps.planner.stamp?.(candidatePlan);
    return planStamp === undefined ? { candidatePlan } : { candidatePlan, planStamp };
  } catch (error) {
    if (isCairnError(error)) throw error;
    // A bug or an unexpected library failure still reaches FailRun under a stable name, with its message kept.
    throw new PlannerError(`the planner failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      context: { code: 'E_PLANNER', runId: run.runId },
    });
  }
}

/** An asynchronous invocation for a planning job (shared/adapters/aws/lambda-plan-jobs.ts). */
const planJobEvent = z.strictObject({ planJobId: z.string().min(1) });

export function createHandler(deps: PlannerHandlerDeps) {
  return async (event: unknown): Promise<{ runId: string } | { planJobId: string; status?: string }> => {
    const job = planJobEvent.safeParse(event);
    if (job.success) {
      const { planJobId } = job.data;
      const after = await runPlanJob({ store: deps.store, clock: deps.clock, planner: deps.planner }, planJobId);
      return { planJobId, ...(after === undefined ? {} : { status: after.status }) };
    }
    const { runId } = parsePayload(runTaskPayload, event);
    const run = await deps.store.getRun(runId);
    if (!run) throw new NotFoundError(`run ${runId} not found`, { context: { runId } });
    if (run.status !== 'planning') {
      throw new ConflictError(`run ${runId} is ${run.status}, not planning`, {
        context: { runId, status: run.status },
      });
    }
    // A submitted plan is its own candidate where it is: ValidatePlan and StartRun read `submittedPlan` when there
    // is no `candidatePlan`, so a second copy of a large plan is neither written here nor read back by them.
    if (run.submittedPlan !== undefined) return { runId };
    const updated = await deps.store.updateRun(runId, ['planning'], {
      ...(await plan(deps, run)),
      updatedAt: deps.clock().toISOString(),
    });
    // Cancelled while the model was thinking: the candidate is dropped, the run keeps its state.
    if (!updated) throw new ConflictError(`run ${runId} left planning while it was planned`, { context: { runId } });
    return { runId };
  };
}

/** The root's store and planner (Bedrock when CAIRN_PLANNER_MODEL_ID is set, else HTN), built on first invocation. */
export function defaultDeps(env: Env = process.env): PlannerHandlerDeps {
  const root = lambdaRoot(env);
  return { store: root.store, planner: root.planner, clock: root.clock };
}

export const handler = lazyHandler('planner', () => createHandler(defaultDeps()));
