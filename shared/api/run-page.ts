/**
 * One page of `GET /runs/{id}`, read for what it shows: the run, its current plan revision (a warm process keeps
 * it), and the records of the steps on the page only, in plan order, a BatchGetItem of at most 100 at a time until
 * the page is full. A page is full at `limit` steps or at MAX_PAGE_BYTES of JSON, whichever comes first, so a page
 * of large steps stays far below Lambda's 6 MB answer however large the run; the steps' large values (outputs,
 * traces) are filled in for the page's steps alone.
 *
 * What the page derives from every step (the run's `paused`, a group's status) comes from the steps' statuses alone
 * (Store.listStepStatuses), and only when it is needed: a run that is not `running` shows its stored status, and a
 * plan without groups has no group to derive.
 */
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

type PageStore = Pick<Store, 'getPlanRevision' | 'listStepStatuses' | 'getSteps' | 'getStep'>;

const needsStatuses = (run: RunRecord, plan: Plan | undefined): boolean =>
  run.status === 'running' || (plan?.steps.some((s) => s.target === null) ?? false);

/** Reads one page of a run: see the module's comment for what is read. */
export async function readRunPage(store: PageStore, run: RunRecord, options: RunPageOptions): Promise<RunPage> {
  const rollback = rollbackStepOf(run);
  const [revision, statusList, rollbackRecord] = await Promise.all([
    run.revision > 0 ? store.getPlanRevision(run.runId, run.revision) : Promise.resolve(undefined),
    // The plan's groups are known only once it is read; a run that is running reads the statuses at once.
    run.status === 'running' ? store.listStepStatuses(run.runId) : Promise.resolve(undefined),
    rollback === undefined ? Promise.resolve(undefined) : store.getStep(run.runId, rollback),
  ]);
  const plan = revision?.plan;
  const entries = statusList ?? (needsStatuses(run, plan) ? await store.listStepStatuses(run.runId) : []);
  const statuses = new Map(entries.map((e): [string, StepStatus] => [e.stepId, e.status]));
  const head = buildRunHead(run, plan, statuses.values(), rollbackRecord === undefined ? [] : [rollbackRecord]);
  if (plan === undefined) return { view: head };
  const budget = (options.maxBytes ?? MAX_PAGE_BYTES) - Buffer.byteLength(JSON.stringify(head)) - CURSOR_ROOM;
  const page = await pageOfPlan(store, run.runId, plan.steps, groupStatuses(plan, statuses), { ...options, budget });
  return { view: { ...head, steps: page.steps }, ...(page.next === undefined ? {} : { next: page.next }) };
}

/** The steps from `from` on, as many as `limit` and `budget` bytes allow (at least one), reading their records. */
async function pageOfPlan(
  store: PageStore,
  runId: string,
  steps: readonly PlanStep[],
  groupStatusOf: GroupStatusOf,
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
      const view = inlineSized(stepView(step, records.get(step.id), groupStatusOf));
      const bytes = Buffer.byteLength(JSON.stringify(view)) + 1;
      if (views.length > 0 && used + bytes > options.budget) return { steps: views, next: at };
      views.push(view);
      used += bytes;
      at += 1;
    }
  }
  return at < steps.length ? { steps: views, next: at } : { steps: views };
}
