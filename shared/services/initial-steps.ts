/**
 * Step records that StartRun may not have written yet. StartRun writes the records of the run's first steps, moves
 * the run to `running` and starts those steps, and only then writes the records of the steps that wait for something
 * (conditional puts: a record that exists is left alone), so that a 200-step plan's first step does not wait for 200
 * writes. Until those puts are done, a record of revision 1 may be missing. Whoever needs one first writes it with
 * the same conditional put, and reads back what is there (StartRun, or another follow-up, may have written or moved
 * it meanwhile):
 * - a release that finds its dependent missing (`releaseDependents`), and a failure that blocks its downstream
 *   (`blockDownstream`): only the steps they touch;
 * - whoever decides on all of a run's steps and would take a missing one for one that does not exist (closing the
 *   open steps of a run that ends, a replan, an invalidation, a compensation): all of them, with `listRunSteps`.
 * Everything else can take a missing record for a pending step that waits: it has an upstream step that is still
 * open (a step that finished released or blocked what follows it, which wrote its record), so a run is never
 * decided over while one is missing. Revision 1's records are never deleted, so once StartRun is done nothing is
 * missing and these calls write nothing.
 */
import { missingStepRecords } from '../engine/scheduling.ts';
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
  const missing = missingStepRecords(first.plan, present, {
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
