/**
 * What clients see of a run: the current plan revision joined with the step records, in plan order, with groups
 * shown as steps whose status is derived from their descendants. The run's own status and progress are derived by
 * the engine (engine/run-view.ts): a running run in which nothing moves and someone waits for a person is `paused`.
 */
import { effectiveBudget, round, spentBy } from '../engine/budget.ts';
import { type BudgetReplanView, budgetReplanView } from '../engine/budget-replan.ts';
import { replanDeclinesOf } from '../engine/run/rules/ending.ts';
import { deriveRunStatus } from '../engine/run-view.ts';
import { isBeingCancelled } from '../engine/statuses.ts';
import { boundJson, clipMessage } from '../plan/bounded-text.ts';
import { buildGraph, groupStatus } from '../plan/graph.ts';
import type { Budget, Plan, PlanStep, RunStatus, StepError, StepStatus } from '../plan/schema.ts';
import type { Spend } from '../ports/capabilities.ts';
import type {
  CompensationRecord,
  RunAction,
  RunRecord,
  StepCounts,
  StepRecord,
  TerminalRecord,
  TraceEntry,
} from '../ports/store.ts';

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
  /** Set when the error was too large to show whole: its message and details are cut (the step's own view has it). */
  readonly errorTruncated?: true;
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

/** The run's ending as views show it; `evidenceTruncated` when the evidence was too large to show whole. */
export type TerminalView = Pick<TerminalRecord, 'state' | 'reason' | 'evidence'> & {
  readonly evidenceTruncated?: true;
};

export interface RunView {
  readonly runId: string;
  readonly status: RunStatus;
  readonly objective: string;
  readonly revision: number;
  /** Who started the run (absent on runs started before it was kept). */
  readonly startedBy?: string;
  readonly steps: readonly StepView[];
  readonly terminal?: TerminalView;
  /** What the run's attempts spent so far. */
  readonly usage?: Spend;
  /** The plan's budget, when it has one, with the limits a person raised: the console shows the spend against it. */
  readonly budget?: Budget;
  /** The replan limit a person raised the run's to (absent: the deployment's). */
  readonly maxReplans?: number;
  /** Who changed the run after it started (cancel, replan, invalidate, compensation, budget): the last 100. */
  readonly actions?: readonly RunAction[];
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
  readonly startedBy?: string;
  readonly progress: Progress;
  /** What the run's attempts spent so far. */
  readonly usage: Spend;
  /** How many of its steps wait for a person's decision (a run paused for them, not at a deadline). */
  readonly awaitingApproval: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly terminal?: TerminalView;
  /** As in RunView: a cancellation has begun and the run has not ended yet. */
  readonly cancelling?: true;
}

/** The cancel's mark as a view shows it: the status stays the run's own until the cancel ends it. */
const cancellingView = (run: RunRecord): { cancelling?: true } => (isBeingCancelled(run) ? { cancelling: true } : {});

/**
 * Characters of JSON of a run's terminal evidence a view shows whole; past them each of its fields is cut to a
 * share (plan/bounded-text.ts boundJson) and `evidenceTruncated` says so. The sources bound what they record, but a
 * run stored by an older version may hold megabytes there, and the view that includes it (GET /runs/{id}, and every
 * GET /runs page listing it) must still fit Lambda's 6 MB answer: a hundred runs to a page.
 */
export const MAX_INLINE_EVIDENCE_CHARS = 32 * 1024;
/** The least share of MAX_INLINE_EVIDENCE_CHARS one field of a truncated evidence keeps. */
const EVIDENCE_FIELD_CHARS = 1024;

function evidenceView(
  evidence: Readonly<Record<string, unknown>>,
): Pick<TerminalView, 'evidence' | 'evidenceTruncated'> {
  const whole = boundJson(evidence, MAX_INLINE_EVIDENCE_CHARS);
  if (!whole.truncated) return { evidence };
  // Cut field by field, so that one huge field (errors, say) does not crowd out the others (counts, summary).
  const keys = Object.keys(evidence);
  const share = Math.max(EVIDENCE_FIELD_CHARS, Math.floor(MAX_INLINE_EVIDENCE_CHARS / Math.max(1, keys.length)));
  const cut =
    keys.length * EVIDENCE_FIELD_CHARS > MAX_INLINE_EVIDENCE_CHARS
      ? (whole.value as Record<string, unknown>)
      : Object.fromEntries(keys.map((key) => [key, boundJson(evidence[key], share).value]));
  return { evidence: cut, evidenceTruncated: true };
}

/**
 * A run held for a person to undo a step by hand shows what that step made (its output, for the rollbackHint): the
 * decider keeps no outputs, so the view takes it from the step's record.
 */
function withRollbackOutput(run: RunRecord, records: readonly StepRecord[]): Record<string, unknown> | undefined {
  const evidence = run.terminal?.evidence;
  if (run.terminal?.reason !== 'rollback_required' || evidence === undefined || 'output' in evidence) return evidence;
  const record = records.find((r) => r.stepId === evidence.stepId);
  return record?.output === undefined ? evidence : { ...evidence, output: record.output };
}

const terminalView = (run: RunRecord, records: readonly StepRecord[] = []): Pick<RunView, 'terminal'> =>
  run.terminal
    ? {
        terminal: {
          state: run.terminal.state,
          reason: run.terminal.reason,
          ...evidenceView(withRollbackOutput(run, records) ?? run.terminal.evidence),
        },
      }
    : {};

/** How a step's view learns a group's status (derived from its descendants' records). */
export type GroupStatusOf = (groupId: string) => StepStatus;

/** A step of the plan as a run view shows it, from its record (absent: not projected yet, so waiting). */
export function stepView(step: PlanStep, record: StepRecord | undefined, groupStatusOf: GroupStatusOf): StepView {
  const base = {
    id: step.id,
    title: step.title,
    target: step.target,
    parentId: step.parentId ?? null,
    dependsOn: step.dependsOn,
    ...(step.metadata === undefined ? {} : { metadata: step.metadata }),
  };
  if (step.target === null) {
    return {
      ...base,
      status: groupStatusOf(step.id),
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
}

/** The group statuses of a plan, from its steps' statuses (a plan without groups needs none). */
export function groupStatuses(plan: Plan, statuses: ReadonlyMap<string, StepStatus>): GroupStatusOf {
  const graph = plan.steps.some((s) => s.target === null) ? buildGraph(plan.steps) : undefined;
  return (groupId) => (graph ? groupStatus(graph, groupId, statuses) : 'pending');
}

export function stepViews(plan: Plan | undefined, records: readonly StepRecord[]): StepView[] {
  if (!plan) return [];
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const groupStatusOf = groupStatuses(plan, new Map(records.map((r) => [r.stepId, r.status])));
  return plan.steps.map((step) => stepView(step, byId.get(step.id), groupStatusOf));
}

const usageView = (record: { readonly usageTokens?: number; readonly usageCostUsd?: number }): Spend => {
  const spent = spentBy(record);
  return { tokens: spent.tokens, costUsd: round(spent.costUsd) };
};

/**
 * A run view without its steps: the run's own fields, its status derived from its steps' `statuses`, and its
 * terminal view (`records`: the step a rollback names, whose output it shows).
 */
export function buildRunHead(
  run: RunRecord,
  plan: Plan | undefined,
  statuses: Iterable<StepStatus>,
  records: readonly StepRecord[] = [],
): RunView {
  return {
    runId: run.runId,
    status: deriveRunStatus(run.status, statuses),
    objective: run.objective,
    revision: run.revision,
    ...(run.startedBy === undefined ? {} : { startedBy: run.startedBy }),
    steps: [],
    ...terminalView(run, records),
    usage: usageView(run),
    ...budgetOf(run, plan),
    ...(run.maxReplans === undefined ? {} : { maxReplans: run.maxReplans }),
    ...(run.actions === undefined || run.actions.length === 0 ? {} : { actions: run.actions }),
    ...budgetReplanOf(run),
    ...cancellingView(run),
  };
}

export function buildRunView(run: RunRecord, plan: Plan | undefined, records: readonly StepRecord[]): RunView {
  const head = buildRunHead(
    run,
    plan,
    records.map((r) => r.status),
    records,
  );
  return { ...head, steps: stepViews(plan, records) };
}

/** The step a run held for a rollback names, when its terminal view shows that step's output (withRollbackOutput). */
export function rollbackStepOf(run: RunRecord): string | undefined {
  const evidence = run.terminal?.evidence;
  if (run.terminal?.reason !== 'rollback_required' || evidence === undefined || 'output' in evidence) return undefined;
  return typeof evidence.stepId === 'string' ? evidence.stepId : undefined;
}

function budgetOf(run: RunRecord, plan: Plan | undefined): Pick<RunView, 'budget'> {
  const budget = effectiveBudget(plan?.budget, run.raisedBudget);
  return budget === undefined ? {} : { budget };
}

function budgetReplanOf(run: RunRecord): Pick<RunView, 'budgetReplan'> {
  const view = budgetReplanView(run.replanLog, replanDeclinesOf(run), run.terminal?.evidence);
  return view === undefined ? {} : { budgetReplan: view };
}

/**
 * Finished over all steps of the current plan (superseded ones left out): only a step that succeeded or was skipped
 * is done. A failed, blocked or cancelled step ended without doing its work, so a cancelled run that finished 4 of
 * its 12 steps is 4/12, never 12/12.
 */
export function progressOf(statuses: Iterable<StepStatus>): Progress {
  let done = 0;
  let total = 0;
  for (const status of statuses) {
    if (status === 'superseded') continue;
    total += 1;
    if (status === 'succeeded' || status === 'skipped') done += 1;
  }
  return { done, total };
}

/** A run as a list shows it: from the run's record and its steps counted by status (no step read). */
export function buildRunSummary(run: RunRecord, counts: StepCounts): RunSummary {
  const statuses = statusesOf(counts);
  return {
    runId: run.runId,
    status: deriveRunStatus(run.status, statuses),
    objective: run.objective,
    revision: run.revision,
    ...(run.startedBy === undefined ? {} : { startedBy: run.startedBy }),
    progress: progressOf(statuses),
    usage: usageView(run),
    awaitingApproval: counts.awaiting_approval ?? 0,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...terminalView(run),
    ...cancellingView(run),
  };
}

/** Each step's status, as many times as steps have it. */
export function statusesOf(counts: StepCounts): StepStatus[] {
  return (Object.entries(counts) as [StepStatus, number][]).flatMap(([status, n]) => Array<StepStatus>(n).fill(status));
}

/**
 * Step outputs larger than this (bytes of JSON) are left out of run views, and traces keep their newest entries:
 * a run view must fit one response (Lambda answers at most 6 MB) whatever its steps returned.
 * `GET /runs/{id}/steps/{stepId}` shows a step whole.
 */
export const MAX_INLINE_OUTPUT_BYTES = 16 * 1024;
export const MAX_INLINE_TRACE = 20;

/** Characters of JSON of an error's `details` a run view shows; its message is at most MAX_MESSAGE_CHARS. */
export const MAX_INLINE_ERROR_DETAILS_CHARS = 2048;

/** A step's error as a run view shows it: bounded (a record written by an older version may hold 10 MB). */
function inlineError(error: StepError): { readonly error: StepError; readonly truncated: boolean } {
  const code = clipMessage(error.code, 200);
  const message = clipMessage(error.message);
  const details = error.details === undefined ? undefined : boundJson(error.details, MAX_INLINE_ERROR_DETAILS_CHARS);
  if (code === error.code && message === error.message && details?.truncated !== true)
    return { error, truncated: false };
  const bounded: StepError = { code, message };
  if (error.retryable !== undefined) bounded.retryable = error.retryable;
  if (details !== undefined) bounded.details = details.value as StepError['details'];
  return { error: bounded, truncated: true };
}

/** A step's view bounded for a run view: a large output left out, the trace's oldest entries and a long error cut. */
export function inlineSized(step: StepView): StepView {
  const bytes = step.output === null ? 0 : Buffer.byteLength(JSON.stringify(step.output) ?? '', 'utf8');
  const omitOutput = bytes > MAX_INLINE_OUTPUT_BYTES;
  const omitTrace = step.trace.length - MAX_INLINE_TRACE;
  const error = step.error === null ? undefined : inlineError(step.error);
  if (!omitOutput && omitTrace <= 0 && error?.truncated !== true) return step;
  return {
    ...step,
    ...(omitOutput ? { output: null, outputOmitted: { bytes } } : {}),
    ...(omitTrace > 0 ? { trace: step.trace.slice(omitTrace), traceOmitted: omitTrace } : {}),
    ...(error?.truncated === true ? { error: error.error, errorTruncated: true as const } : {}),
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
