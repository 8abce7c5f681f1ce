/**
 * The failure diagnosis a planner gets with a replan: which step failed, on which target, with what error after how
 * many attempts, the tail of its trace, and which steps are finished (kept) or blocked (waiting for the replan).
 * Every text is clipped, so the diagnosis stays small whatever the capability answered.
 */
import { buildGraph, downstreamClosure } from '../../plan/graph.ts';
import type { Plan, StepError } from '../../plan/schema.ts';
import type { PlanDiagnosis, ReplanTrigger } from '../../ports/plan-model.ts';
import type { TraceEntry } from '../../ports/store.ts';
import { BUDGET_ERROR_CODE } from '../budget.ts';
import { formatTraceEntry } from '../trace.ts';
import { VERIFY_ERROR_CODES } from '../verify.ts';
import { type LineageMap, stepLineage } from './fingerprint.ts';
import { clipText, isFinishedStatus, type StepStates, statusOf } from './step-definition.ts';

export const DIAGNOSIS_MESSAGE_CHARS = 1000;
export const DIAGNOSIS_TRACE_ENTRIES = 5;
export const DIAGNOSIS_TRACE_CHARS = 300;

/** The failed step as its record tells it (a StepRecord fits), with the target it ran against. */
export interface FailedStepView {
  readonly stepId: string;
  /** Default: the plan step's target. */
  readonly target?: string | null | undefined;
  readonly error?: StepError | null | undefined;
  readonly attempts: number;
  readonly trace?: readonly TraceEntry[] | undefined;
}

export interface DiagnoseInput {
  readonly plan: Plan;
  readonly failed: FailedStepView;
  /** Statuses (or records) of the run's steps, for the finished and blocked lists. */
  readonly states?: StepStates;
  /** Default: read from the error code (triggerFor). */
  readonly trigger?: ReplanTrigger;
  /** Earlier replans' `replaces` links, for the failed step's lineage. */
  readonly lineage?: LineageMap;
}

const VERIFY_CODES: ReadonlySet<string> = new Set(
  Object.values(VERIFY_ERROR_CODES).filter((code) => code !== VERIFY_ERROR_CODES.rejected),
);
// Capability errors that say the target cannot serve at all (missing, not bound, refused by policy).
const UNAVAILABLE = /NOT_FOUND|NO_BINDING|DENIED|FORBIDDEN|CAPABILITY_REJECTED|UNKNOWN_TARGET/i;

/** The replan trigger an error code stands for. */
export function triggerFor(code: string): ReplanTrigger {
  if (code === VERIFY_ERROR_CODES.rejected) return 'approval_rejected';
  // A step over its own budget: what the planner is asked for is a cheaper way to do it.
  if (code === BUDGET_ERROR_CODE) return 'budget';
  if (VERIFY_CODES.has(code)) return 'verify_failed';
  if (UNAVAILABLE.test(code)) return 'capability_unavailable';
  return 'step_failed';
}

export function diagnoseFailure(input: DiagnoseInput): PlanDiagnosis {
  const { plan, failed, states = new Map() } = input;
  const step = plan.steps.find((s) => s.id === failed.stepId);
  const graph = buildGraph(plan.steps);
  const code = failed.error?.code ?? 'E_UNKNOWN';
  const message = clipText(failed.error?.message ?? 'the step failed without an error record', DIAGNOSIS_MESSAGE_CHARS);
  const target = failed.target ?? step?.target ?? undefined;
  const finished = graph.executableIds().filter((id) => isFinishedStatus(statusOf(states, id)));
  const blocked = downstreamClosure(graph, failed.stepId).filter((id) => !isFinishedStatus(statusOf(states, id)));
  const trace = (failed.trace ?? [])
    .slice(-DIAGNOSIS_TRACE_ENTRIES)
    .map((entry) => clipText(formatTraceEntry(entry), DIAGNOSIS_TRACE_CHARS));
  const retryable = failed.error?.retryable;
  return {
    stepId: failed.stepId,
    code,
    message,
    ...(target ? { target } : {}),
    ...(step ? { title: step.title } : {}),
    lineage: stepLineage(failed.stepId, input.lineage),
    trigger: input.trigger ?? triggerFor(code),
    ...(retryable === undefined ? {} : { retryable }),
    attempts: Math.max(0, Math.floor(failed.attempts)),
    trace,
    finished,
    blocked,
  };
}
