/**
 * What a stored revision n+1 does to the run's step records (see applyReplan): removed steps become `superseded`
 * (their work kept for audit, a claimed execution stopped), changed steps start a new generation, added steps get a
 * record, kept steps go on untouched; then every step with nothing left to wait for is started.
 *
 * Each write is conditional and safe to repeat. A finished upstream step is counted as released when the new
 * generation starts; an upstream step that finishes while the generations are being started is counted by a second
 * pass (its own release may have hit the old generation), exactly once per edge as everywhere else.
 */
import type { AppliedReplan } from '../engine/replan.ts';
import { FIRST_GENERATION, planGraph, planTraceText } from '../engine/scheduling.ts';
import { isTerminalStepStatus, RELEASING_STEP_STATUSES } from '../engine/statuses.ts';
import { traceEntry } from '../engine/trace.ts';
import { effectiveUpstream, type PlanGraph } from '../plan/graph.ts';
import type { StepError } from '../plan/schema.ts';
import type { NextGeneration, StepRecord } from '../ports/store.ts';
import type { Interpreter } from './interpreter.ts';
import { startStep } from './step-follow-ups.ts';

export const SUPERSEDED_CODE = 'E_SUPERSEDED';

/** How a restarted or added step starts: finished upstream steps that go on as they are count as released. */
function nextGeneration(
  graph: PlanGraph,
  stepId: string,
  byId: ReadonlyMap<string, StepRecord>,
  restarted: ReadonlySet<string>,
): NextGeneration {
  const upstream = effectiveUpstream(graph, stepId);
  const released = upstream.filter((id) => {
    const status = byId.get(id)?.status;
    return !restarted.has(id) && status !== undefined && RELEASING_STEP_STATUSES.has(status);
  });
  const remaining = upstream.length - released.length;
  return { status: remaining === 0 ? 'ready' : 'pending', upstream, remaining, released };
}

/** Stops the execution that claimed a generation which no longer counts (already finished: nothing to stop). */
async function stopClaimed(ctx: Interpreter, step: StepRecord, error: StepError): Promise<void> {
  if (step.claimedBy === undefined || isTerminalStepStatus(step.status)) return;
  try {
    await ctx.deps.executions.stop(step.claimedBy, error.code, error.message);
  } catch (stopError) {
    console.error('cairn replanner: stopping a superseded step execution failed', {
      runId: step.runId,
      stepId: step.stepId,
      stopError,
    });
  }
}

/** The step's record becomes `superseded` from wherever it is now (it may have moved since it was read). */
async function supersede(ctx: Interpreter, read: StepRecord | undefined, revision: number): Promise<void> {
  const now = ctx.now();
  const error: StepError = {
    code: SUPERSEDED_CODE,
    message: `superseded: plan revision ${revision} no longer has this step`,
    retryable: false,
  };
  let step = read;
  for (let tries = 0; tries < 3 && step; tries++) {
    if (step.status === 'superseded' || RELEASING_STEP_STATUSES.has(step.status)) return;
    const done = await ctx.deps.store.transitionStep(
      step.runId,
      step.stepId,
      { generation: step.generation, from: [step.status] },
      { status: 'superseded', error, finishedAt: now, appendTrace: [traceEntry('plan', error.message, now)] },
    );
    if (done) {
      await stopClaimed(ctx, step, error);
      return;
    }
    step = await ctx.deps.store.getStep(step.runId, step.stepId);
  }
}

async function restart(
  ctx: Interpreter,
  step: StepRecord,
  next: NextGeneration,
  revision: number,
): Promise<StepRecord | undefined> {
  const started = await ctx.deps.store.startGeneration(step.runId, step.stepId, step.generation, next);
  if (started)
    await stopClaimed(ctx, step, {
      code: SUPERSEDED_CODE,
      message: `superseded by generation ${started.generation} (plan revision ${revision})`,
      retryable: false,
    });
  return started;
}

/**
 * Brings the step records in line with `applied` (revision n+1, already stored and made current on the run) and
 * starts what is due. `records` are the run's step records as read before the revision was made.
 */
export async function applyRevisionToRecords(
  ctx: Interpreter,
  runId: string,
  applied: AppliedReplan,
  records: readonly StepRecord[],
): Promise<void> {
  const { store } = ctx.deps;
  const { revision } = applied;
  const graph = planGraph(revision);
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const restarted = new Set([...applied.changed, ...applied.added]);
  const definitions = new Map(revision.steps.map((s) => [s.id, s]));

  await Promise.all(applied.removed.map((id) => supersede(ctx, byId.get(id), revision.revision)));

  const now = ctx.now();
  const fresh: StepRecord[] = [];
  await Promise.all(
    [...restarted].map(async (id) => {
      const next = nextGeneration(graph, id, byId, restarted);
      const existing = byId.get(id);
      const planned = traceEntry('plan', planTraceText(id, definitions.get(id), revision), now);
      // A step a revision dropped earlier and this one brings back continues its own record's generations.
      if (existing) await restart(ctx, existing, { ...next, appendTrace: [planned] }, revision.revision);
      else
        fresh.push({
          runId,
          stepId: id,
          generation: FIRST_GENERATION,
          ...next,
          attempts: 0,
          trace: [planned],
          updatedAt: now,
        });
    }),
  );
  if (fresh.length > 0) await store.putSteps(fresh);
  await startDue(ctx, runId, graph, restarted);
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
  const steps = (await store.listSteps(runId)).filter((s) => executable.has(s.stepId));
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  await Promise.all(
    steps.map(async (step) => {
      let current: StepRecord | undefined = step;
      if (restarted.has(step.stepId))
        for (const upstreamId of step.upstream) {
          const upstream = byId.get(upstreamId);
          if (!current || current.released.includes(upstreamId)) continue;
          if (!upstream || !RELEASING_STEP_STATUSES.has(upstream.status)) continue;
          current =
            (await store.releaseDependency(runId, step.stepId, current.generation, upstreamId)) ??
            (await store.getStep(runId, step.stepId));
        }
      if (current && current.generation === step.generation) await startStep(ctx, current);
    }),
  );
}
