/**
 * One page of `GET /runs/{id}`, read for what it shows: the run, its current plan revision (a warm process keeps
 * it), and the records of the steps on the page only, in plan order, a BatchGetItem of at most 100 at a time until
 * the page is full. A page is full at `limit` steps or at MAX_PAGE_BYTES of JSON, whichever comes first, so a page
 * of large steps stays far below Lambda's 6 MB answer however large the run; the steps' large values (outputs,
 * traces) are filled in for the page's steps alone.
 *
 * What the page derives from every step comes from what the run's last decision counted (the run's `paused`:
 * Store.getStepCounts) or, for a plan with groups (a group's status), from the steps' statuses alone
 * (Store.listStepStatuses). A step its run's start still implies has no record: the page shows the plan's
 * (shared/engine/run/planned.ts).
 */
import { impliedSteps } from '../engine/run/planned.ts';
import { planView } from '../engine/run/state.ts';
import type { Plan, PlanStep, StepStatus } from '../plan/schema.ts';
import type { RunRecord, StepRecord, Store } from '../ports/store.ts';
import {
  buildRunHead,
  type GroupStatusOf,
  groupStatuses,
  inlineSized,
  type RunView,
  rollbackStepOf,
  type StepView,
  statusesOf,
  stepView,
} from './run-view.ts';

/** A page's JSON stays within this many bytes (uncompressed), whatever its steps hold. */
export const MAX_PAGE_BYTES = 1_000_000;
/** Steps a page holds by default: one BatchGetItem's worth, so a first page costs the same for 20 steps or 5,000. */
export const DEFAULT_STEP_PAGE = 100;
/** BatchGetItem reads at most 100 keys a request. */
const READ_CHUNK = 100;
/** Room kept for `"nextCursor":"…"` and the array's brackets. */
const CURSOR_ROOM = 200;

export interface RunPageOptions {
  /** Index in plan order of the page's first step. */
  readonly from: number;
  readonly limit: number;
  /** Bytes of JSON the whole page may take (MAX_PAGE_BYTES unless a test says otherwise). */
  readonly maxBytes?: number;
}

export interface RunPage {
  readonly view: RunView;
  /** Where the next page starts, when there is one. */
  readonly next?: number;
}

type PageStore = Pick<Store, 'getPlanRevision' | 'listStepStatuses' | 'getStepCounts' | 'getSteps' | 'getStep'>;

const hasGroups = (plan: Plan | undefined): boolean => plan?.steps.some((s) => s.target === null) ?? false;

/** Reads one page of a run: see the module's comment for what is read. */
export async function readRunPage(store: PageStore, run: RunRecord, options: RunPageOptions): Promise<RunPage> {
  const rollback = rollbackStepOf(run);
  const [revision, counts, rollbackRecord] = await Promise.all([
    run.revision > 0 ? store.getPlanRevision(run.runId, run.revision) : Promise.resolve(undefined),
    // Only a running run's status is derived from its steps (paused while only people can move it).
    run.status === 'running' ? store.getStepCounts([run.runId]) : Promise.resolve(undefined),
    rollback === undefined ? Promise.resolve(undefined) : store.getStep(run.runId, rollback),
  ]);
  const plan = revision?.plan;
  const entries = hasGroups(plan) ? await store.listStepStatuses(run.runId) : [];
  const statuses = new Map(entries.map((e): [string, StepStatus] => [e.stepId, e.status]));
  const counted = statusesOf(counts?.get(run.runId) ?? {});
  const head = buildRunHead(run, plan, counted, rollbackRecord === undefined ? [] : [rollbackRecord]);
  if (plan === undefined) return { view: head };
  const budget = (options.maxBytes ?? MAX_PAGE_BYTES) - Buffer.byteLength(JSON.stringify(head)) - CURSOR_ROOM;
  const implied = impliedBy(run, plan);
  const page = await pageOfPlan(store, run.runId, plan.steps, groupStatuses(plan, statuses), implied, {
    ...options,
    budget,
  });
  return { view: { ...head, steps: page.steps }, ...(page.next === undefined ? {} : { next: page.next }) };
}

/** The steps from `from` on, as many as `limit` and `budget` bytes allow (at least one), reading their records. */
async function pageOfPlan(
  store: PageStore,
  runId: string,
  steps: readonly PlanStep[],
  groupStatusOf: GroupStatusOf,
  implied: (stepId: string) => StepRecord | undefined,
  options: { readonly from: number; readonly limit: number; readonly budget: number },
): Promise<{ steps: StepView[]; next?: number }> {
  const views: StepView[] = [];
  let used = 0;
  let at = options.from;
  const end = Math.min(steps.length, options.from + options.limit);
  while (at < end) {
    const chunk = steps.slice(at, Math.min(end, at + READ_CHUNK));
    const ids = chunk.filter((s) => s.target !== null).map((s) => s.id);
    const records = new Map((await store.getSteps(runId, ids)).map((r): [string, StepRecord] => [r.stepId, r]));
    for (const step of chunk) {
      const record = records.get(step.id) ?? (step.target === null ? undefined : implied(step.id));
      const view = inlineSized(stepView(step, record, groupStatusOf));
      const bytes = Buffer.byteLength(JSON.stringify(view)) + 1;
      if (views.length > 0 && used + bytes > options.budget) return { steps: views, next: at };
      views.push(view);
      used += bytes;
      at += 1;
    }
  }
  return at < steps.length ? { steps: views, next: at } : { steps: views };
}

/** The record a step without one has: what its run's start implied (built once per page, and only if needed). */
function impliedBy(run: RunRecord, plan: Plan): (stepId: string) => StepRecord | undefined {
  let planned: Map<string, StepRecord> | undefined;
  return (stepId) => {
    // The page shows no releases: the implied records as they are, nothing derived.
    planned ??= new Map(
      (run.revision === 1 ? impliedSteps(run, planView(plan), []) : []).map((r): [string, StepRecord] => [r.stepId, r]),
    );
    return planned.get(stepId);
  };
}
