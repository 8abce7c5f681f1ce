/**
 * Step records that StartRun may not have written yet. StartRun writes the records of the run's first steps, moves
 * the run to `running` and starts those steps, and only then writes the records of the steps that wait for something
 * (conditional puts: a record that exists is left alone), so that a 200-step plan's first step does not wait for 200
 * writes. Until those puts are done, a record of revision 1 may be missing. Whoever needs one first writes it with
 * the same conditional put, and reads back what is there (StartRun, or another follow-up, may have written or moved
 * it meanwhile):
 * - a release that finds its dependent missing (`releaseDependents`): the record with that edge counted, so the one
 *   write is the release too; a failure that blocks its downstream (`blockDownstream`): the steps it blocks;
 * - whoever decides on all of a run's steps and would take a missing one for one that does not exist (closing the
 *   open steps of a run that ends, a replan, an invalidation, a compensation): all of them, with `listRunSteps`.
 * Everything else can take a missing record for a pending step that waits: it has an upstream step that is still
 * open (a step that finished released or blocked what follows it, which wrote its record), so a run is never
 * decided over while one is missing. Revision 1's records are never deleted, so once StartRun is done nothing is
 * missing and these calls write nothing.
 *
 * Why not fewer, bigger writes up front: BatchWriteItem takes no condition and overwrites an item whole, so a
 * StartRun repeated while the first one still runs (a Task retried after a lost answer) could put back a step a claim
 * had moved; TransactWriteItems (≤ 100 actions, a ConditionCheck on the run) would be safe but costs two write units
 * per item, and dynalite has no transactions.
 */
import { countedAgainst, missingStepRecords } from '../engine/scheduling.ts';
import { isNotFoundError } from '../errors.ts';
import type { StepRecord } from '../ports/store.ts';
import type { Interpreter, LoadedPlan } from './interpreter.ts';

/** Revision 1 of the run, whose steps StartRun creates; undefined before the run has one. */
async function firstRevision(ctx: Interpreter, runId: string): Promise<LoadedPlan | undefined> {
  try {
    return await ctx.plan({ runId, revision: 1 });
  } catch (error) {
    if (isNotFoundError(error)) return undefined;
    throw error;
  }
}

/**
 * `found` (records read of the run), completed with the records of revision 1's steps among `wanted` (all of them when
 * absent) that it lacks: those are written (conditional puts) and read back.
 */
export async function withMissingSteps(
  ctx: Interpreter,
  runId: string,
  found: readonly StepRecord[],
  wanted?: Iterable<string>,
): Promise<StepRecord[]> {
  const present = new Set(found.map((s) => s.stepId));
  const asked = wanted === undefined ? undefined : new Set([...wanted].filter((id) => !present.has(id)));
  if (asked?.size === 0) return [...found];
  const first = await firstRevision(ctx, runId);
  if (first === undefined) return [...found];
  const missing = missingStepRecords(first, present, {
    runId,
    now: ctx.now(),
    ...(asked === undefined ? {} : { wanted: asked }),
  });
  if (missing.length === 0) return [...found];
  const { store } = ctx.deps;
  await store.putSteps(missing);
  return [
    ...found,
    ...(await store.getSteps(
      runId,
      missing.map((s) => s.stepId),
    )),
  ];
}

/** Every step record of the run, none of revision 1's missing (see above). */
export async function listRunSteps(ctx: Interpreter, runId: string): Promise<StepRecord[]> {
  return withMissingSteps(ctx, runId, await ctx.deps.store.listSteps(runId));
}

/**
 * The record of revision 1's step `stepId`, written (if it is still missing) with the edge from `upstreamId` counted,
 * and read back: undefined when revision 1 has no such step. Whoever wrote it first, the edge is counted once: by
 * this put, or, when the record was there first, by the caller's release (`released` says which).
 */
export async function writeMissingStep(
  ctx: Interpreter,
  runId: string,
  stepId: string,
  upstreamId: string,
): Promise<StepRecord | undefined> {
  const first = await firstRevision(ctx, runId);
  if (first === undefined) return undefined;
  const [record] = missingStepRecords(first, new Set(), { runId, now: ctx.now(), wanted: [stepId] });
  if (record === undefined) return undefined;
  const { store } = ctx.deps;
  await store.putSteps([countedAgainst(record, upstreamId)]);
  return store.getStep(runId, stepId);
}
