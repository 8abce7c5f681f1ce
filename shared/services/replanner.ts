/**
 * The replanner (issue 4): answers a final step failure (StepFailed with `final: true`, routed by BUS_RULES) and a
 * person's `POST /runs/{id}/replan` with a bounded, scoped revision of the run's plan.
 *
 * A failure: taken once (`handledFailures`: a duplicate or reordered event changes nothing), then the budget and
 * no-progress decision (the run paused for a person, with the reason), else the planner (HTN, or Bedrock when
 * configured) proposes revision n+1 within the failed step's scope, validated and held to the scope rule. It is
 * stored with a conditional write (of two racing replans one wins; the loser looks again and stops unless its own
 * failure still stands), the run moves to it (revision, replans, fingerprint, the PriorReplan record), removed steps
 * are superseded, changed ones start a new generation, added ones get a record, and what is due starts. No
 * alternative, or a revision that is invalid or breaks the scope: the failure stands and the run ends `failed`.
 *
 * A manual replan revises around the run's failed step (or a gate left waiting by its `pause` timeout policy),
 * reopens a finished run, and is refused (409) at the replan limit.
 */

import { triggerFor } from '../engine/replan/diagnosis.ts';
import { decideReplan, diagnoseFailure, revisionApplication, stepStates } from '../engine/replan.ts';
import { letsStepsMove, STEP_MOVING_RUN_STATUSES } from '../engine/statuses.ts';
import { ConflictError, isConflictError, isTransientPlatformError } from '../errors.ts';
import type { Plan } from '../plan/schema.ts';
import type { PlanModel, ReplanTrigger } from '../ports/plan-model.ts';
import type { ReplanRecord, RevisionApplication, RunRecord, StepRecord } from '../ports/store.ts';
import { APPROVAL_EXPIRED_CODE, APPROVAL_EXPIRED_REASON } from './coordinator-approval.ts';
import { failureKey } from './coordinator-replan.ts';
import type { CoordinatorDeps } from './coordinator-types.ts';
import { createInterpreter, event, type LoadedPlan } from './interpreter.ts';
import { finishRevision } from './replanner-apply.ts';
import {
  declineFailure,
  describeReplanError,
  fingerprintOf,
  lineageOf,
  priorReplans,
  proposeWithRetry,
  revisionReason,
  sleep,
} from './replanner-support.ts';
import { persistRevision } from './revisions.ts';
import { failurePolicies, isReplannable, pauseRun } from './run-end.ts';
import { isReopenable, reopenRun } from './run-reopen.ts';

export interface ReplannerDeps extends CoordinatorDeps {
  /** The planning model: the HTN method library embedded, Bedrock when a model id is configured. */
  readonly model: PlanModel;
  /** Wait before looking again after losing a revision race, per try (ms; default 100). */
  readonly raceDelayMs?: number;
}

export interface StepFailedRef {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
}

export type ReplanOutcome =
  | { readonly outcome: 'revised'; readonly revision: number }
  | { readonly outcome: 'paused'; readonly reason: 'max_replans' | 'no_progress' }
  | { readonly outcome: 'declined'; readonly code: string; readonly message: string }
  | { readonly outcome: 'ignored'; readonly why: 'disabled' | 'duplicate' | 'stale' | 'run_ended' | 'lost_race' };

export interface Replanner {
  /** A final step failure (a StepFailed event). Idempotent: a repeat or a stale event changes nothing. */
  onStepFailed(ref: StepFailedRef): Promise<ReplanOutcome>;
  /**
   * A person's replan. Returns the revision made, or none when a concurrent replan made it first. ConflictError
   * (409) at the replan limit or with nothing to replan; PlannerError (422) when the planner finds no revision.
   */
  /**
   * Whether a person's replan of the run may go ahead now (the API asks before it hands the replan to a worker):
   * ConflictError (409) at the replan limit, with nothing to replan, or for a run without a plan.
   */
  checkReplan(runId: string): Promise<void>;
  replanRun(request: {
    readonly runId: string;
    readonly reason: string;
  }): Promise<{ runId: string; revision?: number }>;
}

/** Tries of one failure against revisions that keep moving under it (each lost race means another replan won). */
const RACE_TRIES = 8;
const DEFAULT_RACE_DELAY_MS = 100;
/** Tries, in one invocation, of an answer (or of finishing a revision) that a platform error interrupted. */
export const PLATFORM_TRIES = 3;

interface Attempt {
  readonly run: RunRecord;
  readonly loaded: LoadedPlan;
  readonly records: readonly StepRecord[];
  readonly failed: StepRecord;
  readonly trigger: ReplanTrigger;
  /** A person's reason (manual replan). */
  readonly manual?: string;
}

/** Revision n+1 made current: what finishing it takes. */
interface Made {
  readonly revision: number;
  readonly plan: Plan;
  readonly application: RevisionApplication;
}

type Revised = Made | 'lost' | 'ended';

export function createReplanner(deps: ReplannerDeps): Replanner {
  const ctx = createInterpreter(deps);
  const { store } = deps;
  const maxReplans = Math.max(0, Math.floor(deps.config.maxReplans ?? 0));
  const plannerDeps = {
    model: deps.model,
    catalog: deps.catalog,
    limits: { maxSteps: deps.config.maxSteps, maxDepth: deps.config.maxDepth },
  };
  const raceDelay = (tries: number) => sleep((deps.raceDelayMs ?? DEFAULT_RACE_DELAY_MS) * tries);

  /**
   * Proposes, stores and makes current revision n+1 around `attempt.failed`, recording on the run what it does to
   * the step records; finishRevision then brings them in line. Planner errors propagate.
   */
  async function makeRevision(attempt: Attempt): Promise<Revised> {
    const { run, loaded, records, failed } = attempt;
    const planStep = loaded.byId.get(failed.stepId);
    const diagnosis = diagnoseFailure({
      plan: loaded.plan,
      failed: { ...failed, target: planStep?.target },
      states: stepStates(records),
      trigger: attempt.trigger,
      lineage: lineageOf(run),
    });
    const proposal = await proposeWithRetry(plannerDeps, {
      previous: loaded.plan,
      records,
      diagnosis,
      replans: priorReplans(run),
    });
    const revision = proposal.revision.revision;
    const reason = revisionReason(failed, proposal.change, attempt.manual);
    try {
      await persistRevision(ctx, run.runId, proposal.revision, reason);
    } catch (error) {
      if (!isConflictError(error)) throw error;
      // Only a failure's own answer may take a stored revision for its own: a person's replans of one run may
      // propose the same revision with the same reason at once, and exactly one of them may make it.
      const own = attempt.manual === undefined && (await isOwnStoredRevision(run.runId, proposal.revision, reason));
      if (!own) return 'lost';
    }
    // A person's replan of a finished run opens it again (a new run execution waits for it).
    if (isReopenable(run)) await reopenRun(ctx, run, reason);
    const record: ReplanRecord = {
      revision,
      stepId: failed.stepId,
      ...(planStep?.target ? { target: planStep.target } : {}),
      code: failed.error?.code ?? 'E_UNKNOWN',
      change: proposal.change,
      ...(Object.keys(proposal.replaces).length === 0 ? {} : { replaces: { ...proposal.replaces } }),
      failure: failureKey(failed),
      reason,
      at: ctx.now(),
    };
    const application = revisionApplication(proposal, records);
    const fingerprint = fingerprintOf(run, failed);
    // PlanRevised travels with the write that makes the revision current, which only an open run takes: a run
    // cancelled meanwhile has nothing published after its RunFinished.
    const updated = await ctx.updateRun(
      run.runId,
      STEP_MOVING_RUN_STATUSES,
      {
        revision,
        replans: run.replans + 1,
        replanFingerprints: [...new Set([...(run.replanFingerprints ?? []), fingerprint])],
        replanLog: [...(run.replanLog ?? []), { ...record, application }],
        updatedAt: ctx.now(),
      },
      { events: [event('PlanRevised', { runId: run.runId, revision, reason })] },
    );
    // Cancelled or out of time meanwhile: the stored revision stays for audit, nothing more happens.
    if (!updated) return 'ended';
    return { revision, plan: proposal.revision, application };
  }

  /**
   * Whether revision `plan.revision`, found stored, is the one this answer to a failure proposed: an earlier try
   * stored it and threw before the write that makes it current (a store timeout whose write landed). One failure is
   * answered by one holder of its `handledFailures` mark at a time, and the reason names the failed step, so the same
   * reason and plan at a revision the run has not reached yet can only be that earlier try's: the repeat makes it
   * current instead of losing to itself.
   */
  async function isOwnStoredRevision(runId: string, plan: Plan, reason: string): Promise<boolean> {
    const stored = await store.getPlanRevision(runId, plan.revision);
    if (stored?.reason !== reason || JSON.stringify(stored.plan) !== JSON.stringify(plan)) return false;
    const run = await store.getRun(runId);
    return run !== undefined && run.revision < plan.revision;
  }

  /** `action` again, a little later, while it fails with a platform error (PLATFORM_TRIES in all). */
  async function withPlatformRetries<T>(action: (tries: number) => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await action(tries);
      } catch (error) {
        if (!isTransientPlatformError(error) || tries >= PLATFORM_TRIES) throw error;
        await sleep((deps.raceDelayMs ?? DEFAULT_RACE_DELAY_MS) * tries);
      }
    }
  }

  /**
   * Revision n+1 made current and the step records brought in line; a platform error while bringing them in line is
   * tried again, from the records as they are then (a person's replan has no redelivery to finish it).
   */
  async function revise(attempt: Attempt): Promise<Revised> {
    const made = await makeRevision(attempt);
    if (typeof made !== 'object') return made;
    const { runId } = attempt.run;
    await withPlatformRetries(async (tries) => {
      const records = tries === 1 ? attempt.records : await store.listSteps(runId);
      await finishRevision(ctx, runId, made.plan, made.application, records);
    });
    return made;
  }

  /**
   * The revision an earlier try of this answer made current, finished: the write that made it current recorded what
   * it does to the step records, and some of those writes may not have landed (a throttle, a store timeout). The
   * failed step may already have its new generation, so this is looked up before the failure itself.
   */
  async function resumeRevision(ref: StepFailedRef): Promise<ReplanOutcome | undefined> {
    const run = await store.getRun(ref.runId);
    const key = failureKey(ref);
    const made = run?.replanLog?.find((r) => r.failure === key);
    if (!run || !made) return undefined;
    if (!letsStepsMove(run.status)) return { outcome: 'ignored', why: 'run_ended' };
    if (made.revision !== run.revision || made.application === undefined)
      return { outcome: 'ignored', why: 'duplicate' };
    const loaded = await ctx.plan(run);
    await finishRevision(ctx, run.runId, loaded.plan, made.application, await store.listSteps(run.runId));
    return { outcome: 'revised', revision: made.revision };
  }

  /** Reads the run as it is now; undefined when the failure is gone (a newer generation, a newer revision). */
  async function current(ref: StepFailedRef): Promise<Omit<Attempt, 'trigger'> | undefined> {
    const run = await store.getRun(ref.runId);
    if (!run || run.revision < 1) return undefined;
    const records = await store.listSteps(ref.runId);
    const failed = records.find((r) => r.stepId === ref.stepId);
    if (!failed || failed.generation !== ref.generation || failed.status !== 'failed') return undefined;
    const loaded = await ctx.plan(run);
    return loaded.byId.has(ref.stepId) ? { run, loaded, records, failed } : undefined;
  }

  async function answer(ref: StepFailedRef): Promise<ReplanOutcome> {
    const resumed = await resumeRevision(ref);
    if (resumed) return resumed;
    for (let tries = 1; tries <= RACE_TRIES; tries++) {
      const found = await current(ref);
      if (!found) return { outcome: 'ignored', why: 'stale' };
      const { run, failed } = found;
      const planStep = found.loaded.byId.get(failed.stepId);
      const why =
        planStep?.segment !== undefined
          ? // A failure inside a segment is answered by compensating the segment, not by revising the plan around it.
            { code: 'E_SEGMENT_COMPENSATED', message: `segment ${planStep.segment} is compensated instead` }
          : !isReplannable(failurePolicies(found.loaded), failed.stepId)
            ? { code: 'E_FAILURE_POLICY', message: `the step's onFailure policy is ${planStep?.onFailure}` }
            : undefined;
      if (why !== undefined) {
        await declineFailure(ctx, failed, why);
        return { outcome: 'declined', ...why };
      }
      if (run.status !== 'running' || run.terminal !== undefined) {
        // Finished, or paused for a person: the failure stands until someone replans or invalidates.
        await declineFailure(ctx, failed, { code: 'E_RUN_NOT_RUNNING', message: `the run was ${run.status}` });
        return { outcome: 'ignored', why: 'run_ended' };
      }
      const fingerprint = fingerprintOf(run, failed);
      const decision = decideReplan({
        replansSoFar: run.replans,
        maxReplans,
        fingerprint,
        previousFingerprints: run.replanFingerprints ?? [],
      });
      if (decision.action === 'pause') {
        await pauseRun(ctx, run.runId, decision.reason, {
          stepId: failed.stepId,
          generation: failed.generation,
          error: failed.error ?? null,
          fingerprint,
          replans: run.replans,
          maxReplans,
          detail: decision.detail,
        });
        return { outcome: 'paused', reason: decision.reason };
      }
      let result: Revised;
      try {
        result = await makeRevision({ ...found, trigger: triggerFor(failed.error?.code ?? 'E_UNKNOWN') });
      } catch (error) {
        // A platform error on the way (a throttled or timed-out store call) is no answer from the planner: the
        // retry answers the failure, finding whatever of this try landed.
        if (isTransientPlatformError(error)) throw error;
        const why = describeReplanError(error);
        if (why.code === 'E_REPLAN_FAILED') console.error('cairn replanner: replanning failed', { ref, error });
        await declineFailure(ctx, failed, why);
        return { outcome: 'declined', ...why };
      }
      if (result === 'ended') return { outcome: 'ignored', why: 'run_ended' };
      if (result !== 'lost') {
        // Current now: whatever throws from here on is the retry's to finish (resumeRevision), never a decline.
        await finishRevision(ctx, run.runId, result.plan, result.application, found.records);
        return { outcome: 'revised', revision: result.revision };
      }
      await raceDelay(tries);
    }
    // Still losing: the failure stands rather than keeping the run waiting for an answer that does not come.
    const found = await current(ref);
    if (found)
      await declineFailure(ctx, found.failed, {
        code: 'E_REPLAN_RACE',
        message: `other replans kept revising the plan (${RACE_TRIES} tries)`,
      });
    return { outcome: 'ignored', why: 'lost_race' };
  }

  /** What a person's replan revises, read now; ConflictError when the run's state says no. */
  async function replannable(runId: string): Promise<Omit<Attempt, 'trigger'>> {
    const run = await ctx.getRun(runId);
    if (run.status === 'planning' || run.status === 'cancelled' || run.revision < 1)
      throw new ConflictError(`run ${runId} is ${run.status}: it has no plan to revise`, {
        context: { runId, code: 'E_NOT_REPLANNABLE' },
      });
    if (run.replans >= maxReplans)
      throw new ConflictError(
        `run ${runId} has reached its replan limit: ${run.replans} of ${maxReplans} replans made`,
        { context: { runId, code: 'E_REPLAN_LIMIT', replans: run.replans, maxReplans } },
      );
    const loaded = await ctx.plan(run);
    const records = await store.listSteps(runId);
    const failed = replanTarget(run, loaded, records);
    if (!failed)
      throw new ConflictError(
        `run ${runId} has nothing to replan: no step of revision ${run.revision} failed or waits on an expired approval`,
        { context: { runId, code: 'E_NOTHING_TO_REPLAN' } },
      );
    return { run, loaded, records, failed };
  }

  return {
    async onStepFailed(ref) {
      if (maxReplans === 0) return { outcome: 'ignored', why: 'disabled' };
      const taken = failureKey(ref);
      // Taken but not answered (a throttled read or write on the way, or the mark's own write timed out after it
      // landed): the mark is taken back so that the redelivery answers it, else the run waits for a replan that
      // never comes (awaitsReplan) with nothing left open to settle it.
      const release = () => withPlatformRetries(() => store.unmarkRunOnce(ref.runId, 'handledFailures', taken));
      let marked: boolean;
      try {
        marked = await store.markRunOnce(ref.runId, 'handledFailures', taken);
      } catch (error) {
        await release();
        throw error;
      }
      if (!marked) return { outcome: 'ignored', why: 'duplicate' };
      try {
        // Every answer is idempotent: a platform error on the way is tried again here before the redelivery's turn.
        return await withPlatformRetries(() => answer(ref));
      } catch (error) {
        await release();
        throw error;
      }
    },

    async checkReplan(runId) {
      await replannable(runId);
    },

    async replanRun({ runId, reason }) {
      const found = await replannable(runId);
      const result = await revise({ ...found, trigger: 'manual', manual: reason });
      return typeof result === 'object' ? { runId, revision: result.revision } : { runId };
    },
  };
}

/**
 * The step a manual replan revises around: the first failed step of the current revision (plan order), else the
 * gate the run was paused for by its `pause` timeout policy (still waiting, its approval expired), given that error.
 */
function replanTarget(run: RunRecord, loaded: LoadedPlan, records: readonly StepRecord[]): StepRecord | undefined {
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const steps = loaded.graph.executableIds().flatMap((id) => byId.get(id) ?? []);
  const failed = steps.find((s) => s.status === 'failed');
  if (failed) return failed;
  if (run.terminal?.reason !== APPROVAL_EXPIRED_REASON) return undefined;
  const gate = byId.get(String(run.terminal.evidence.stepId));
  if (gate?.status !== 'awaiting_approval') return undefined;
  const message = String(run.terminal.evidence.detail ?? 'no decision before the approval deadline');
  return { ...gate, error: { code: APPROVAL_EXPIRED_CODE, message, retryable: false } };
}
