/**
 * What a stored revision n+1 does to the run's step records (see applyReplan): removed steps become `superseded`
 * (their work kept for audit, a claimed execution stopped), changed steps start a new generation, added steps get a
 * record, kept steps go on untouched; then every step with nothing left to wait for is started.
 *
 * Each write is conditional and safe to repeat. A finished upstream step is counted as released when the new
 * generation starts; an upstream step that finishes while the generations are being started is counted by a second
 * pass (its own release may have hit the old generation), exactly once per edge as everywhere else.
 */
import { applicationWork } from '../engine/replan.ts';
import { planGraph } from '../engine/scheduling.ts';
import { RELEASING_STEP_STATUSES } from '../engine/statuses.ts';
import { traceEntry } from '../engine/trace.ts';
import type { PlanGraph } from '../plan/graph.ts';
import type { Plan, StepError } from '../plan/schema.ts';
import { forEachInPool } from '../pool.ts';
import type { NextGeneration, RevisionApplication, RunRecord, StepRecord } from '../ports/store.ts';
import { listRunSteps } from './initial-steps.ts';
import type { Interpreter } from './interpreter.ts';
import { CANCELLED_ERROR, checkRunEnd, settleRun } from './run-end.ts';
import { closeOpenSteps, startStep } from './step-follow-ups.ts';
import {
  closeSuperseded,
  endedAs,
  REMOVED_APPROVAL_COMMENT,
  REVISED_APPROVAL_COMMENT,
  SUPERSEDED_CODE,
} from './superseded-generations.ts';

/** The step's record becomes `superseded` from wherever it is now (it may have moved since it was read). */
async function supersede(ctx: Interpreter, read: StepRecord, revision: number): Promise<void> {
  const now = ctx.now();
  const error: StepError = {
    code: SUPERSEDED_CODE,
    message: `superseded: plan revision ${revision} no longer has this step`,
    retryable: false,
  };
  let step: StepRecord | undefined = read;
  for (let tries = 0; tries < 3 && step; tries++) {
    if (step.status === 'superseded' || RELEASING_STEP_STATUSES.has(step.status)) return;
    const done = await ctx.deps.store.transitionStep(
      step.runId,
      step.stepId,
      { generation: step.generation, from: [step.status] },
      { status: 'superseded', error, finishedAt: now, appendTrace: [traceEntry('plan', error.message, now)] },
    );
    if (done) {
      // As a restarted step's old generation: its execution stopped, its attempt and approvals closed (a late
      // decision answers 410, GET /approvals no longer offers it).
      // As the transition found it (the status it left, the attempts it had then).
      await closeSuperseded(ctx, step.runId, [{ ...done, status: step.status }], {
        errorOf: () => error,
        approvalComment: REMOVED_APPROVAL_COMMENT,
      });
      return;
    }
    step = await ctx.deps.store.getStep(step.runId, step.stepId);
  }
}

/**
 * Starts the step's next generation and closes what the one it supersedes left open (its execution, its running
 * attempt, its pending approvals), as an invalidation does: a gate waiting for a person is closed now, not when
 * someone decides on it or the run ends.
 */
async function restart(
  ctx: Interpreter,
  step: StepRecord,
  next: NextGeneration,
  revision: number,
): Promise<StepRecord | undefined> {
  const started = await ctx.deps.store.startGeneration(step.runId, step.stepId, step.generation, next);
  if (started)
    await closeSuperseded(ctx, step.runId, [endedAs(step, started)], {
      errorOf: () => ({
        code: SUPERSEDED_CODE,
        message: `superseded by generation ${started.generation} (plan revision ${revision})`,
        retryable: false,
      }),
      approvalComment: REVISED_APPROVAL_COMMENT,
    });
  return started;
}

/**
 * Brings the step records in line with `plan` (revision n+1, already stored and made current on the run, with its
 * `application` recorded) and starts what is due. `records` are the run's step records: as read before the revision
 * was made on the first pass, as read now on a repeat. Only what has not landed yet is written (applicationWork), so
 * a repeat after a throw finishes the revision instead of doing it twice.
 */
export async function finishRevision(
  ctx: Interpreter,
  runId: string,
  plan: Plan,
  application: RevisionApplication,
  records: readonly StepRecord[],
): Promise<void> {
  const graph = planGraph(plan);
  const work = applicationWork({ runId, application, graph, records, plan, now: ctx.now() });
  await forEachInPool(work.supersede, (step) => supersede(ctx, step, plan.revision));
  await forEachInPool(work.restart, async ({ step, next }) => {
    await restart(ctx, step, next, plan.revision);
  });
  if (work.create.length > 0) await ctx.deps.store.putSteps(work.create);
  await startDue(ctx, runId, graph, work.fresh);
  const run = await ctx.getRun(runId);
  // A cancellation that landed while the generations were being started may have closed the run's steps before some
  // of them got their new generation: those are closed now, so no step of a cancelled run stays open.
  if (run.status === 'cancelled') await closeOpenSteps(ctx, runId, CANCELLED_ERROR);
  await recordFinishedSinks(ctx, run);
  // Nothing to run (a person's revision that only dropped open steps): the run ends again on its own.
  if (application.restarted.length + application.added.length === 0) await settleRun(ctx, runId);
}

/**
 * A finished step that the revision made a sink (what waited for it was dropped or no longer waits) ended its line
 * of work before it was one, so it never went on the run's frontier: it is recorded now, else nobody would complete
 * the set of sinks and the run would never end.
 */
async function recordFinishedSinks(ctx: Interpreter, run: RunRecord): Promise<void> {
  const loaded = await ctx.plan(run);
  const sinks = new Set(loaded.sinks);
  const finished = (await listRunSteps(ctx, run.runId)).filter(
    (s) => sinks.has(s.stepId) && RELEASING_STEP_STATUSES.has(s.status),
  );
  if (finished.length > 0) await checkRunEnd(ctx, loaded, run.runId, finished);
}

/**
 * Counts upstream steps that finished while the generations were being started (a release they sent then hit the
 * old generation and was lost), then starts every step of the run with nothing left to wait for.
 */
async function startDue(
  ctx: Interpreter,
  runId: string,
  graph: PlanGraph,
  restarted: ReadonlySet<string>,
): Promise<void> {
  const { store } = ctx.deps;
  const executable = new Set(graph.executableIds());
  const steps = (await listRunSteps(ctx, runId)).filter((s) => executable.has(s.stepId));
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  await forEachInPool(steps, async (step) => {
    let current: StepRecord | undefined = step;
    if (restarted.has(step.stepId))
      for (const upstreamId of step.upstream) {
        const upstream = byId.get(upstreamId);
        if (!current || current.released.includes(upstreamId)) continue;
        if (!upstream || !RELEASING_STEP_STATUSES.has(upstream.status)) continue;
        current =
          (await store.releaseDependency(runId, step.stepId, current.generation, upstreamId, upstream.generation)) ??
          (await store.getStep(runId, step.stepId));
      }
    if (current && current.generation === step.generation) await startStep(ctx, current);
  });
}
