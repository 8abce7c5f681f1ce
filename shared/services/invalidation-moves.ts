/**
 * The moves of an invalidation (invalidation-run.ts says in what order they come): a step's next generation, with a
 * write of this invalidation recognised as its own however it landed, and the rounds that move once more what
 * engine `movesAgain` names once the first moves are in.
 */
import { movesAgain } from '../engine/invalidation.ts';
import { ConflictError } from '../errors.ts';
import { mapInPool } from '../pool.ts';
import type { NextGeneration, StepRecord } from '../ports/store.ts';
import type { Interpreter, LoadedPlan } from './interpreter.ts';
import { endedAs } from './superseded-generations.ts';

export interface Moved {
  readonly before: StepRecord;
  readonly after: StepRecord;
}

export interface Scope {
  readonly runId: string;
  readonly graph: LoadedPlan['graph'];
  readonly scope: readonly string[];
  /** The run's steps, and their statuses, as the invalidation read them. */
  readonly statuses: ReadonlyMap<string, StepRecord['status']>;
  readonly records: ReadonlyMap<string, StepRecord>;
  readonly key: string | undefined;
}

/** How often the scope is read and its steps moved again before the try gives up (and is tried again). */
const MAX_MOVE_ROUNDS = 4;

/**
 * Moves once more what engine `movesAgain` names in the scope read now: a lost step made from a step this invalidation
 * moved as it was before, and a waiting step waiting for another generation of an upstream step of the scope than
 * its current one (a move planned with it never landed: a try failed part-way, its repeat took what landed as made);
 * with what waits for them. Read again after each round (a move can be lost too); still unsettled after the last: a
 * retryable ConflictError, and the repeat carries on. `moves` and `superseded` are brought up to date.
 */
export async function moveAgain(
  ctx: Interpreter,
  { runId, graph, scope, statuses, records, key }: Scope,
  moves: Map<string, Moved>,
  superseded: StepRecord[],
  lost: readonly string[],
  /** The run ended under the moves and was reopened: generations of this invalidation its ending closed move too. */
  endedUnder = false,
): Promise<void> {
  let left = lost;
  for (let round = 0; ; round++) {
    const read = await ctx.deps.store.getSteps(runId, [...scope]);
    const fresh = new Map([...records, ...read.map((s): [string, StepRecord] => [s.stepId, s])]);
    const again = movesAgain(graph, scope, statuses, fresh, left, new Set(moves.keys()), endedUnder ? key : undefined);
    if (again.size === 0) return;
    if (round === MAX_MOVE_ROUNDS) {
      const context = { runId, steps: [...again.keys()] };
      throw new ConflictError(`steps of run ${runId} kept moving under its invalidation`, { context, retryable: true });
    }
    const results = await mapInPool([...again], async ([id, plan]): Promise<string | undefined> => {
      const current = fresh.get(id);
      if (!current) return undefined;
      const after = (await startGeneration(ctx, current, key === undefined ? plan : { ...plan, key }))?.step;
      if (!after) return id;
      const before = endedAs(current, after);
      superseded.push(before);
      moves.set(id, { before: moves.get(id)?.before ?? before, after });
      return undefined;
    });
    left = results.filter((id): id is string => id !== undefined);
  }
}

/**
 * Starts the step's next generation from the one it is in. A write of this invalidation (its key, the generation
 * after the one read) counts as this call's: one that landed although its answer was lost (a timeout), and one an
 * earlier try made (`earlier`) that landed after this try read the step. A try fails at its first failed move while
 * its other moves are still under way, and the try after it reads the steps at once: a move of the first still in
 * flight then wins over its own, which took the step for one a concurrent mover started and left it to that mover
 * to start (chaos seed 42 run 3: the invalidated step `ready` in its new generation for good, announced by nobody).
 */
export async function startGeneration(
  ctx: Interpreter,
  step: StepRecord,
  next: NextGeneration,
): Promise<{ readonly step: StepRecord; readonly earlier: boolean } | undefined> {
  const { store } = ctx.deps;
  const ours = (read: StepRecord | undefined) =>
    read?.generation === step.generation + 1 && read.generationKey === next.key ? read : undefined;
  let started: StepRecord | undefined;
  try {
    started = await store.startGeneration(step.runId, step.stepId, step.generation, next);
  } catch (error) {
    const found =
      next.key === undefined ? undefined : ours(await store.getStep(step.runId, step.stepId).catch(() => undefined));
    if (found === undefined) throw error;
    return { step: found, earlier: false };
  }
  if (started !== undefined) return { step: started, earlier: false };
  // A read that fails here fails the try: taken for lost, the move would be nobody's to start.
  const earlier = next.key === undefined ? undefined : ours(await store.getStep(step.runId, step.stepId));
  return earlier === undefined ? undefined : { step: earlier, earlier: true };
}
