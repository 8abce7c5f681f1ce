/**
 * Invalidating steps of one run: the stale steps and their downstream closure start a new generation (the ended
 * ones' results kept in history, their attempts untouched); upstream and unrelated steps keep theirs. The order
 * leaves every step exactly one way to be started:
 *
 * 1. a finished run reopens (with a new run execution that waits for it again), and the sinks its ending closed go
 *    on its frontier again (so that it can end again);
 * 2. every step of the scope gets its next generation before any starts (so no new result can be released into a
 *    dependent still on its old generation); one a concurrent mover started first is left to it unless that
 *    generation waits for a step this invalidation moved (then it moves once more, see moveAgain);
 * 3. the executions of superseded in-flight generations are stopped (their late results fail the generation
 *    condition anyway) and their approvals closed; a live run that finished meanwhile reopens now (and again, should a
 *    look at the run that read its steps before they moved finish it before the announcement); StepsInvalidated is
 *    announced by a write on the run conditioned on it letting steps move (a run cancelled meanwhile announces
 *    nothing more, and the new generations are closed);
 * 4. steps that an upstream failure outside the scope keeps from ever running are blocked (the upstream steps read
 *    again: a failure that landed meanwhile could block only the old generations), upstream steps that
 *    finished meanwhile are counted, every step with nothing left to wait for is started, and with blocked steps
 *    (a repeat's earlier ones too), and with the steps of the scope that already ended when the run was reopened
 *    (by this call or a repeat's first try), the run's end is looked at.
 *
 * An invalidation with a key (its event id, a request's idempotency key) is repeatable: each new generation carries
 * the key, so a repeat after a first try that failed part-way (a throttle, a lost answer) takes the steps it already
 * moved as moved and moves only the rest, once each, and then does everything that follows.
 */
import {
  generationBefore,
  invalidationScope,
  isStaleAfterChange,
  nextGenerations,
  startedByKey,
  unreachableSteps,
} from '../engine/invalidation.ts';
import { isStartable } from '../engine/scheduling.ts';
import {
  isOpenStepStatus,
  RELEASING_STEP_STATUSES,
  STEP_MOVING_RUN_STATUSES,
  takesInvalidation,
} from '../engine/statuses.ts';
import { transitionCondition } from '../engine/step-lifecycle.ts';
import { traceEntry } from '../engine/trace.ts';
import { ConflictError } from '../errors.ts';
import { blockedByOf, stepsInvalidatedParts } from '../events/bounded-details.ts';
import { effectiveUpstream } from '../plan/graph.ts';
import type { StepError } from '../plan/schema.ts';
import { forEachInPool, mapInPool } from '../pool.ts';
import type { RunRecord, StepRecord } from '../ports/store.ts';
import { finishBegunCancel } from './cancellation.ts';
import { listRunSteps } from './initial-steps.ts';
import { event, type Interpreter, type LoadedPlan } from './interpreter.ts';
import { type Moved, moveAgain, startGeneration } from './invalidation-moves.ts';
import { CANCELLED_ERROR, checkRunEnd, recordEnded } from './run-end.ts';
import { ensureRunExecution, isReopenable, reopenIfFinished } from './run-reopen.ts';
import { BLOCKED_CODE, closeOpenSteps, startStep } from './step-follow-ups.ts';
import { CLOSED_AS_CANCELLED, closeSuperseded, endedAs, INVALIDATED } from './superseded-generations.ts';

export interface RunInvalidation {
  readonly runId: string;
  /** The steps that started a new generation, in plan order ([] when nothing was stale). */
  readonly stepIds: readonly string[];
  /** Whether this invalidation reopened the finished run. */
  readonly reopened: boolean;
  /** The run was cancelled or being cancelled: nothing was announced or started (see cutShort). */
  readonly cut?: true;
}

export interface InvalidationOptions {
  /**
   * Set for a resource change: only watchers whose current generation ran before the change are stale (an older
   * event delivered after a newer one changes nothing). `changedAt` undefined: every watcher that ran is stale.
   */
  readonly resourceChange?: { readonly changedAt?: string | undefined };
  /** What names this invalidation across its tries: kept on each generation it starts (see the top of the file). */
  readonly key?: string;
}

/** Invalidates `roots` (step or group ids of the run's current plan) and what depends on them. */
export async function invalidateInRun(
  ctx: Interpreter,
  run: RunRecord,
  roots: readonly string[],
  reason: string,
  options: InvalidationOptions = {},
): Promise<RunInvalidation> {
  const runId = run.runId;
  // Cancelled or being cancelled: nothing new moves (the cancel closes the run), but what an earlier try began (cutShort).
  const cut = !takesInvalidation(run);
  const nothing: RunInvalidation = { runId, stepIds: [], reopened: false, ...(cut ? { cut } : {}) };
  if (cut && (options.key === undefined || run.status === 'planning' || run.cancelCompensation === true))
    return nothing;
  const loaded = await ctx.plan(run);
  const { graph } = loaded;
  const records = new Map((await listRunSteps(ctx, runId)).map((s) => [s.stepId, s]));
  const candidates = roots.flatMap((id) => (graph.isGroup(id) ? graph.executableDescendants(id) : [id]));
  const { resourceChange, key } = options;
  // Moved by an earlier try of this same invalidation: stale as they were then, whatever their new generation says.
  const own = startedByKey(records.values(), key);
  if (cut && own.size === 0) return nothing;
  const stale = candidates.filter((id) => {
    const record = records.get(id);
    if (record === undefined) return false;
    return own.has(id) || !resourceChange || isStaleAfterChange(record, resourceChange.changedAt);
  });
  const scope = invalidationScope(graph, stale).filter((id) => {
    const status = records.get(id)?.status;
    return status !== undefined && status !== 'superseded';
  });
  if (scope.length === 0) return nothing;

  // A finished run reopens first, so that nobody sees it finished with steps of a new generation waiting.
  let reopened = !cut && (await reopenIfFinished(ctx, run, reason));
  if (!cut && (reopened || (run.reopened ?? 0) > 0))
    await recordEndedSinks(ctx, runId, loaded, records, new Set(scope));
  // A repeat: the first try reopened the run, and may have failed before its new run execution started.
  if (!cut && own.size > 0 && run.status === 'running') await ensureRunExecution(ctx, run);
  const statuses = new Map([...records.values()].map((s) => [s.stepId, s.status]));
  // The generation each step was in before this invalidation (a step an earlier try moved: the one it moved from).
  const generations = new Map(
    [...records.values()].map((r): [string, number] => [
      r.stepId,
      own.has(r.stepId) ? generationBefore(r).generation : r.generation,
    ]),
  );
  const next = nextGenerations(graph, scope, statuses, generations);
  const moves = new Map<string, Moved>();
  const lost: string[] = [];
  // Moves of this invalidation made by an earlier try that landed after this one read the steps.
  let landedLate = false;
  await forEachInPool(scope, async (id) => {
    const current = records.get(id);
    const plan = next.get(id);
    if (!current || !plan) return;
    if (own.has(id)) {
      moves.set(id, { before: generationBefore(current), after: current });
      return;
    }
    const started = await startGeneration(ctx, current, key === undefined ? plan : { ...plan, key });
    if (started) moves.set(id, { before: endedAs(current, started.step), after: started.step });
    // Lost: a concurrent invalidation or revision started this step's next generation.
    else lost.push(id);
    landedLate ||= started?.earlier === true;
  });
  // The generations this invalidation ended (a step moved twice ended two).
  const superseded = [...moves.values()].map((m) => m.before);
  // Lost moves, or a repeat (its first try's moves may have landed in part): the scope is looked at as a whole.
  if (moves.size > 0 && (lost.length > 0 || own.size > 0 || landedLate))
    await moveAgain(ctx, { runId, graph, scope, statuses, records, key }, moves, superseded, lost);
  let moved = scope.flatMap((id) => moves.get(id) ?? []);
  if (moved.length === 0) return { ...nothing, reopened };
  const stepIds = moved.map((m) => m.after.stepId);

  // In a cancelled run nothing asks again: what the old generations left open closes as the cancel closes it.
  await closeSuperseded(ctx, runId, superseded, cut ? CLOSED_AS_CANCELLED : INVALIDATED);
  if (cut) return cutShort(ctx, runId, stepIds);
  // Re-read: a live run that finished while the generations were being started reopens here.
  let endedUnder = await reopenIfFinished(ctx, await ctx.getRun(runId), reason);
  // StepsInvalidated travels with a write only a run that lets steps move takes: a run cancelled meanwhile has
  // nothing published after its RunFinished.
  let announced = await announce(ctx, runId, stepIds, reason);
  // Finished again after the re-read: a look at the run that read its steps before they moved took it for over (its
  // write is conditioned on the run only). The new generations are open in a finished run: it reopens once more.
  for (let tries = 0; !announced && tries < MAX_REOPENINGS; tries++) {
    const current = await ctx.getRun(runId);
    if (!isReopenable(current)) break;
    endedUnder = (await reopenIfFinished(ctx, current, reason)) || endedUnder;
    announced = await announce(ctx, runId, stepIds, reason);
  }
  reopened ||= endedUnder;
  if (!announced) {
    // Cancelled while the generations were being started: the cancellation may have closed the old ones only.
    if ((await ctx.getRun(runId)).status === 'cancelled') {
      const invalidated = new Set(stepIds);
      await closeOpenSteps(ctx, runId, CANCELLED_ERROR, (s) => invalidated.has(s.stepId));
    }
    return { runId, stepIds, reopened };
  }
  // An ending that closes what is open (the run failing before it started for good, its deadline) may have closed
  // generations this call started before it reopened the run (chaos seed 60 run 87), or a repeat's first try did:
  // those move once more, with what waits for them.
  if (endedUnder || own.size > 0) {
    await moveAgain(ctx, { runId, graph, scope, statuses, records, key }, moves, superseded, [], true);
    moved = scope.flatMap((id) => moves.get(id) ?? []);
  }

  // Read again, now that the generations are started: an upstream step outside the scope that failed after the first
  // read had its failure block the old generations only (those blocks lose their generation condition), and nobody
  // else would block the new ones.
  const upstreamNow = await withOutsideUpstream(ctx, loaded, runId, stepIds, statuses);
  const blockedSteps = await blockUnreachable(ctx, loaded, moved, upstreamNow);
  const blocked = new Set(blockedSteps.map((s) => s.stepId));
  const open = moved.map((m) => m.after).filter((s) => !blocked.has(s.stepId));
  const ready = await catchUpReleases(ctx, runId, open);
  await forEachInPool(ready.filter(isStartable), (s) => startStep(ctx, s));
  // Blocked steps are settled steps: with nothing else left open, the run finishes again here. A repeat counts the
  // steps its first try blocked too: that try may have failed before this look, and nobody else makes it.
  const blockedEarlier = moved.filter((m) => own.has(m.after.stepId) && m.after.status === 'blocked');
  const settled = [...blockedSteps, ...blockedEarlier.map((m) => m.after)];
  // A step of the scope that ended before this call last reopened the run looked at the run's end while it was
  // finished (or before it was), and looks no more: a late release of its upstream can start a new generation
  // before the announcement, and a repeat finds the generations its first try started already run. Whoever reopened
  // the run, this call or (for a repeat) its first try, looks for them once the run is open for good.
  if (reopened || own.size > 0) settled.push(...(await endedSince(ctx, runId, stepIds, settled)));
  if (settled.length > 0) await checkRunEnd(ctx, loaded, runId, settled);
  return { runId, stepIds, reopened };
}

/**
 * The end of a repeat of an invalidation cut short by a cancellation: its first try moved part of the scope before
 * the cancel's mark (chaos seed 33 run 53: of a chain k1 → k2 → k3, k1 and k2 moved, then a store fault; k3 then
 * succeeded on k2's superseded generation while k2 closed `cancelled`). The repeat has moved the rest, so no result
 * stands on a generation the invalidation ended, and nothing is announced or started: the moved steps close
 * `cancelled` (the results they held stay in their history), and a cancel that has begun and not ended is finished.
 * Not in a run cancelled with compensation: the undo decides from the steps' current results, and a succeeded step
 * moved on would hide its side effect from it.
 */
async function cutShort(ctx: Interpreter, runId: string, stepIds: readonly string[]): Promise<RunInvalidation> {
  // The run read before the moves may have ended otherwise since (a mark that lost the race to the run's end): the
  // next try takes the moves as an invalidation, which reopens it.
  const context = { runId };
  if (takesInvalidation(await ctx.getRun(runId)))
    throw new ConflictError(`run ${runId} ended otherwise under its invalidation`, { context, retryable: true });
  const moved = new Set(stepIds);
  await closeOpenSteps(ctx, runId, CANCELLED_ERROR, (s) => moved.has(s.stepId));
  await finishBegunCancel(ctx, runId);
  return { runId, stepIds, reopened: false, cut: true };
}

/** The steps of `stepIds` that are no longer open, read now, but for those already in `known`. */
async function endedSince(
  ctx: Interpreter,
  runId: string,
  stepIds: readonly string[],
  known: readonly StepRecord[],
): Promise<StepRecord[]> {
  const counted = new Set(known.map((s) => s.stepId));
  const rest = stepIds.filter((id) => !counted.has(id));
  if (rest.length === 0) return [];
  return (await ctx.deps.store.getSteps(runId, rest)).filter((s) => !isOpenStepStatus(s.status));
}

/**
 * A reopened run ends when its sinks are all on the frontier again, and the steps its ending closed were put there
 * by that ending, which a store failure may have kept from it (its repeat finds them closed and records nothing).
 * The sinks outside the scope that are no longer open are put there again, before anything of the scope moves, so
 * the last of the scope's sinks to end looks at the run.
 */
async function recordEndedSinks(
  ctx: Interpreter,
  runId: string,
  loaded: LoadedPlan,
  records: ReadonlyMap<string, StepRecord>,
  scope: ReadonlySet<string>,
): Promise<void> {
  const ended = loaded.sinks.flatMap((id) => {
    const record = records.get(id);
    return record !== undefined && !scope.has(id) && !isOpenStepStatus(record.status) ? [record] : [];
  });
  if (ended.length > 0) await recordEnded(ctx, runId, ended);
}

/** How often an invalidation reopens a run that keeps finishing under it before it gives up (and throws nothing). */
const MAX_REOPENINGS = 3;

/** StepsInvalidated, with a write only a run that lets steps move takes; false when the run took no steps moving. */
async function announce(ctx: Interpreter, runId: string, stepIds: readonly string[], reason: string): Promise<boolean> {
  const announced = await ctx.updateRun(
    runId,
    STEP_MOVING_RUN_STATUSES,
    { updatedAt: ctx.now() },
    // In parts, each naming a bounded slice of the steps (events/bounded-details.ts): no event grows with the plan.
    { events: stepsInvalidatedParts(runId, stepIds, reason).map((part) => event('StepsInvalidated', part)) },
  );
  return announced !== undefined;
}

/**
 * `statuses`, with the statuses of the scope's upstream steps outside it read now. A failure written before this
 * read is seen here; one written after it reads the new generations when it blocks its downstream.
 */
async function withOutsideUpstream(
  ctx: Interpreter,
  loaded: LoadedPlan,
  runId: string,
  scope: readonly string[],
  statuses: ReadonlyMap<string, StepRecord['status']>,
): Promise<ReadonlyMap<string, StepRecord['status']>> {
  const inScope = new Set(scope);
  const outside = [...new Set(scope.flatMap((id) => effectiveUpstream(loaded.graph, id)))].filter(
    (id) => !inScope.has(id),
  );
  if (outside.length === 0) return statuses;
  const read = await ctx.deps.store.getSteps(runId, outside);
  return new Map([...statuses, ...read.map((s): [string, StepRecord['status']] => [s.stepId, s.status])]);
}

/**
 * Blocks the steps of the new generations that wait (directly or through the scope) for an upstream step outside
 * the scope that failed or is blocked: nothing would ever release them. Returns the steps it blocked.
 */
async function blockUnreachable(
  ctx: Interpreter,
  loaded: LoadedPlan,
  moved: readonly Moved[],
  statuses: ReadonlyMap<string, StepRecord['status']>,
): Promise<StepRecord[]> {
  const scope = moved.map((m) => m.after.stepId);
  const unreachable = unreachableSteps(loaded.graph, scope, statuses);
  const now = ctx.now();
  const keys: StepRecord[] = [];
  await forEachInPool(moved, async ({ after }) => {
    const causes = unreachable.get(after.stepId);
    if (!causes) return;
    // A step waiting on many failed upstream steps names a sample of them: neither its record nor its event grows
    // with the plan (events/bounded-details.ts).
    const { blockedBy, blockedByCount, message } = blockedByOf(causes);
    const error: StepError = {
      code: BLOCKED_CODE,
      message,
      retryable: false,
      details: { blockedBy, blockedByCount },
    };
    const { runId, stepId, generation } = after;
    const blocked = await ctx.transitionStep(
      runId,
      stepId,
      transitionCondition('block', generation),
      { status: 'blocked', error, finishedAt: now, appendTrace: [traceEntry('fail', error.message, now)] },
      [event('StepBlocked', { runId, stepId, generation, blockedBy, blockedByCount })],
    );
    if (blocked) keys.push(blocked);
  });
  return keys;
}

/**
 * Counts upstream steps that finished well while the generations were being started, whose own release went to the
 * dependent's old generation: steps outside the scope that finished after the statuses were read, and steps of the
 * scope whose next generation already ran (an upstream step outside the scope released it before its dependent
 * had moved). One conditional write per edge, so a release racing this one is counted once, and the store refuses
 * the generation of a scope step that was invalidated (staleReleases). Returns the steps as they are now.
 */
async function catchUpReleases(ctx: Interpreter, runId: string, steps: readonly StepRecord[]): Promise<StepRecord[]> {
  const { store } = ctx.deps;
  const waitingFor = (s: StepRecord) => s.upstream.filter((u) => !s.released.includes(u));
  const upstream = [...new Set(steps.flatMap(waitingFor))];
  if (upstream.length === 0) return [...steps];
  const finished = new Map(
    (await store.getSteps(runId, upstream))
      .filter((u) => RELEASING_STEP_STATUSES.has(u.status))
      .map((u) => [u.stepId, u.generation]),
  );
  return mapInPool(steps, async (step) => {
    let current = step;
    for (const u of waitingFor(step).filter((id) => finished.has(id))) {
      current =
        (await store.releaseDependency(runId, step.stepId, step.generation, u, finished.get(u))) ??
        (await store.getStep(runId, step.stepId)) ??
        current;
    }
    return current;
  });
}
