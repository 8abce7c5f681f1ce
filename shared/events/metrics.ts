/**
 * What a run's published events count, and how long a step or a person took: derived from facts the writer already
 * has (the events of a committed batch, a finished step's start and end, an approval's request and decision times).
 * Nothing here reads or writes the store; without a sink (the embedded runtime, tests) nothing is recorded.
 */
import { METRIC_NAMES as M, type MetricsSink } from '../ports/metrics.ts';

/** The dimension value when a step's capability is not known (a group, a plan not loaded in this process). */
export const UNKNOWN_CAPABILITY = 'unknown';

const STEP_COUNTS: Readonly<Record<string, string>> = {
  StepSucceeded: M.stepsSucceeded,
  StepFailed: M.stepsFailed,
  StepRetrying: M.stepsRetried,
  StepBlocked: M.stepsBlocked,
};

export interface EmittedEvent {
  readonly type: string;
  readonly detail: unknown;
}

const fieldOf = (detail: unknown, name: string): unknown =>
  typeof detail === 'object' && detail !== null ? (detail as Record<string, unknown>)[name] : undefined;

/** Counts step outcomes per capability, replans and invalidated steps from a batch of emitted events. */
export function countEventMetrics(
  sink: MetricsSink,
  events: readonly EmittedEvent[],
  capabilityOf: (stepId: string) => string | undefined,
): void {
  for (const event of events) {
    const stepMetric = STEP_COUNTS[event.type];
    const stepId = fieldOf(event.detail, 'stepId');
    if (stepMetric !== undefined && typeof stepId === 'string') {
      // A StepFailed that is not final is a failure on the way to a retry: StepsRetried counts it.
      if (event.type === 'StepFailed' && fieldOf(event.detail, 'final') === false) continue;
      sink.count(stepMetric, 1, { capability: capabilityOf(stepId) ?? UNKNOWN_CAPABILITY });
    } else if (event.type === 'PlanRevised') {
      sink.count(M.replans, 1);
    } else if (event.type === 'StepsInvalidated') {
      const stepIds = fieldOf(event.detail, 'stepIds');
      sink.count(M.invalidations, Array.isArray(stepIds) ? stepIds.length : 1);
    }
  }
}

const millisBetween = (from: string | undefined, to: string | undefined): number | undefined => {
  if (from === undefined || to === undefined) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
};

/** How long a step took from its claim to its final status (retries and approval waits included). */
export function recordStepDuration(
  sink: MetricsSink | undefined,
  step: { readonly startedAt?: string | undefined; readonly finishedAt?: string | undefined },
  capability: string | null | undefined,
  outcome: 'succeeded' | 'failed',
): void {
  const ms = millisBetween(step.startedAt, step.finishedAt);
  if (sink === undefined || ms === undefined) return;
  sink.duration(M.stepDuration, ms, { capability: capability ?? UNKNOWN_CAPABILITY, outcome });
}

/** How long a person took to decide an approval or review (or how long it waited before it expired). */
export function recordApprovalWait(
  sink: MetricsSink | undefined,
  approval: { readonly createdAt: string; readonly kind: string },
  decidedAt: string | undefined,
  decision: string,
): void {
  const ms = millisBetween(approval.createdAt, decidedAt);
  if (sink === undefined || ms === undefined) return;
  sink.duration(M.approvalWait, ms, { kind: approval.kind, decision });
}
