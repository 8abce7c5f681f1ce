/**
 * What clients see of a run: the current plan revision joined with the step records, in plan order, with groups
 * shown as steps whose status is derived from their descendants. The run's own status and progress are derived by
 * the engine (engine/run-view.ts): a running run in which nothing moves and someone waits for a person is `paused`.
 */
import { round, spentBy } from '../engine/budget.ts';
import { type BudgetReplanView, budgetReplanView } from '../engine/budget-replan.ts';
import { deriveRunStatus, progress } from '../engine/run-view.ts';
import { isBeingCancelled } from '../engine/statuses.ts';
import { buildGraph, groupStatus } from '../plan/graph.ts';
import type { Budget, Plan, RunStatus, StepError, StepStatus } from '../plan/schema.ts';
import type { Spend } from '../ports/capabilities.ts';
import type { CompensationRecord, RunRecord, StepRecord, TerminalRecord, TraceEntry } from '../ports/store.ts';
import { replanDeclines } from '../services/coordinator-replan.ts';

export interface StepView {
  readonly id: string;
  readonly title: string;
  readonly target: string | null;
  readonly parentId: string | null;
  readonly dependsOn: readonly string[];
  readonly status: StepStatus;
  /** null for a group (groups have no executions of their own). */
  readonly generation: number | null;
  /** The number of attempts of the current generation. */
  readonly attempts: number;
  readonly output: unknown;
  readonly error: StepError | null;
  readonly confidence: number | null;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly trace: readonly TraceEntry[];
  /** Set when the output was too large to show inline: its size in bytes of JSON (the step's own view has it). */
  readonly outputOmitted?: { readonly bytes: number };
  /** How many of the oldest trace entries were left out (the step's own view has them all). */
  readonly traceOmitted?: number;
  /** What the step's attempts spent (all generations); null for a group. */
  readonly usage?: Spend | null;
  /** The step's own budget, when the plan gives it one. */
  readonly budget?: Budget;
  /** The step's free-form metadata from the plan, when it has some. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Its saga segment, its rollbackHint and, once one started, its compensation: only when there is one. */
  readonly segment?: string;
  readonly rollbackHint?: string;
  readonly compensation?: CompensationRecord;
}

export interface Progress {
  readonly done: number;
  readonly total: number;
}

export interface RunView {
  readonly runId: string;
  readonly status: RunStatus;
  readonly objective: string;
  readonly revision: number;
  readonly steps: readonly StepView[];
  readonly terminal?: Pick<TerminalRecord, 'state' | 'reason' | 'evidence'>;
  /** What the run's attempts spent so far. */
  readonly usage?: Spend;
  /** The plan's budget, when it has one: the console shows the spend against it. */
  readonly budget?: Budget;
  /** The budget replan (`onExhausted: "replan"`), once the run asked for one: what became of it. */
  readonly budgetReplan?: BudgetReplanView;
  /** Present (true) while a cancellation has begun and the run has not ended yet: it starts nothing more. */
  readonly cancelling?: true;
}

export interface RunSummary {
  readonly runId: string;
  readonly status: RunStatus;
  readonly objective: string;
  readonly revision: number;
  readonly progress: Progress;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly terminal?: Pick<TerminalRecord, 'state' | 'reason' | 'evidence'>;
  /** As in RunView: a cancellation has begun and the run has not ended yet. */
  readonly cancelling?: true;
}

/** The cancel's mark as a view shows it: the status stays the run's own until the cancel ends it. */
const cancellingView = (run: RunRecord): { cancelling?: true } => (isBeingCancelled(run) ? { cancelling: true } : {});

const terminalView = (run: RunRecord): Pick<RunView, 'terminal'> =>
  run.terminal
    ? { terminal: { state: run.terminal.state, reason: run.terminal.reason, evidence: run.terminal.evidence } }
    : {};

export function stepViews(plan: Plan | undefined, records: readonly StepRecord[]): StepView[] {
  if (!plan) return [];
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const statuses = new Map(records.map((r) => [r.stepId, r.status]));
  const graph = plan.steps.some((s) => s.target === null) ? buildGraph(plan.steps) : undefined;
  return plan.steps.map((step): StepView => {
    const base = {
      id: step.id,
      title: step.title,
      target: step.target,
      parentId: step.parentId ?? null,
      dependsOn: step.dependsOn,
      ...(step.metadata === undefined ? {} : { metadata: step.metadata }),
    };
    if (step.target === null) {
      const status = graph ? groupStatus(graph, step.id, statuses) : 'pending';
      return {
        ...base,
        status,
        generation: null,
        attempts: 0,
        output: null,
        error: null,
        confidence: null,
        startedAt: null,
        finishedAt: null,
        trace: [],
        usage: null,
      };
    }
    const record = byId.get(step.id);
    return {
      ...base,
      // A step of a freshly persisted revision may not have its record yet: it is waiting, not unknown.
      status: record?.status ?? 'pending',
      generation: record?.generation ?? 1,
      attempts: record?.attempts ?? 0,
      output: record?.output ?? null,
      error: record?.error ?? null,
      confidence: record?.confidence ?? null,
      startedAt: record?.startedAt ?? null,
      finishedAt: record?.finishedAt ?? null,
      trace: record?.trace ?? [],
      usage: usageView(record ?? {}),
      ...(step.budget === undefined ? {} : { budget: step.budget }),
      ...(step.segment === undefined ? {} : { segment: step.segment }),
      ...(step.rollbackHint === undefined ? {} : { rollbackHint: step.rollbackHint }),
      ...(record?.compensation === undefined ? {} : { compensation: record.compensation }),
    };
  });
}

const usageView = (record: { readonly usageTokens?: number; readonly usageCostUsd?: number }): Spend => {
  const spent = spentBy(record);
  return { tokens: spent.tokens, costUsd: round(spent.costUsd) };
};

export function buildRunView(run: RunRecord, plan: Plan | undefined, records: readonly StepRecord[]): RunView {
  return {
    runId: run.runId,
    status: deriveRunStatus(
      run.status,
      records.map((r) => r.status),
    ),
    objective: run.objective,
    revision: run.revision,
    steps: stepViews(plan, records),
    ...terminalView(run),
    usage: usageView(run),
    ...(plan?.budget === undefined ? {} : { budget: plan.budget }),
    ...budgetReplanOf(run),
    ...cancellingView(run),
  };
}

function budgetReplanOf(run: RunRecord): Pick<RunView, 'budgetReplan'> {
  const view = budgetReplanView(run.replanLog, replanDeclines(run), run.terminal?.evidence);
  return view === undefined ? {} : { budgetReplan: view };
}

export function buildRunSummary(run: RunRecord, records: readonly StepRecord[]): RunSummary {
  return {
    runId: run.runId,
    status: deriveRunStatus(
      run.status,
      records.map((r) => r.status),
    ),
    objective: run.objective,
    revision: run.revision,
    progress: progress(records.map((r) => r.status)),
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...terminalView(run),
    ...cancellingView(run),
  };
}

/**
 * Step outputs larger than this (bytes of JSON) are left out of run views, and traces keep their newest entries:
 * a run view must fit one response (Lambda answers at most 6 MB) whatever its steps returned.
 * `GET /runs/{id}/steps/{stepId}` shows a step whole.
 */
export const MAX_INLINE_OUTPUT_BYTES = 16 * 1024;
export const MAX_INLINE_TRACE = 20;

function inlineSized(step: StepView): StepView {
  const bytes = step.output === null ? 0 : Buffer.byteLength(JSON.stringify(step.output) ?? '', 'utf8');
  const omitOutput = bytes > MAX_INLINE_OUTPUT_BYTES;
  const omitTrace = step.trace.length - MAX_INLINE_TRACE;
  if (!omitOutput && omitTrace <= 0) return step;
  return {
    ...step,
    ...(omitOutput ? { output: null, outputOmitted: { bytes } } : {}),
    ...(omitTrace > 0 ? { trace: step.trace.slice(omitTrace), traceOmitted: omitTrace } : {}),
  };
}

/** One page of a run's steps in plan order, from index `from`; `next` is where the next page starts, if any. */
export function pageOfSteps(
  steps: readonly StepView[],
  from: number,
  limit: number,
): { steps: StepView[]; next?: number } {
  const page = steps.slice(from, from + limit).map(inlineSized);
  const next = from + limit;
  return next < steps.length ? { steps: page, next } : { steps: page };
}
