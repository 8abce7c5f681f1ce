/**
 * Compensation (saga) decisions. Steps may share a `segment`; when one of them fails for good, or the run is
 * cancelled with compensation, the segment is *aborting*: its unclaimed steps are cancelled (they have not acted),
 * the ones in flight are waited for, and then its finished mutating steps are undone one at a time, in reverse
 * completion order, each by its capability's compensation — or, when the capability names none, by a person
 * following the step's rollbackHint (the run pauses and shows it). A compensation that fails for good pauses the run
 * for a person too.
 *
 * Pure: the services load the plan and the step records, ask `decideCompensation` what comes next and act on it;
 * whoever finishes a piece of the work (a member settling, a compensation ending) asks again.
 */
import type { StepError, StepStatus } from '../plan/schema.ts';
import { CLAIMABLE_STEP_STATUSES, IN_FLIGHT_STEP_STATUSES } from './statuses.ts';

/** What the decision needs to know of a plan step. */
export interface CompensationMember {
  readonly id: string;
  readonly segment?: string | undefined;
  /** Its capability is `mutating`: a succeeded run of it changed the outside world. */
  readonly mutating: boolean;
  /** Its capability names a compensation. */
  readonly compensable: boolean;
  readonly rollbackHint?: string | undefined;
}

export interface CompensationStepView {
  readonly status: StepStatus;
  readonly finishedAt?: string | undefined;
  readonly error?: StepError | null | undefined;
}

export interface CompensationInput {
  /** The executable steps of the current revision, in plan order. */
  readonly members: readonly CompensationMember[];
  readonly steps: ReadonlyMap<string, CompensationStepView>;
  /** The run is cancelled with compensation: every segment aborts. */
  readonly cancelAll?: boolean | undefined;
}

export type CompensationDecision =
  /** No segment aborts: nothing to undo. */
  | { readonly kind: 'none' }
  /** Steps of an aborting segment are still in flight, or a compensation is under way: its end asks again. */
  | { readonly kind: 'wait'; readonly waitingFor: readonly string[]; readonly cancel: readonly string[] }
  /** Undo this step next (start its compensation, or start it again: a compensation under way is idempotent). */
  | { readonly kind: 'compensate'; readonly stepId: string; readonly cancel: readonly string[] }
  /** This step has no compensation: a person must act on its rollbackHint. */
  | { readonly kind: 'hint'; readonly stepId: string; readonly hint: string; readonly cancel: readonly string[] }
  /** This step's compensation failed for good: a person must act. */
  | { readonly kind: 'failed'; readonly stepId: string; readonly error: StepError | null }
  /** Every finished mutating step of the aborting segments is compensated (in this order, most recent first). */
  | { readonly kind: 'done'; readonly compensated: readonly string[] };

/** The segments that abort: those with a member failed for good, or all of them on a cancellation. */
export function abortingSegments(input: CompensationInput): Set<string> {
  const segments = new Set<string>();
  for (const member of input.members) {
    if (member.segment === undefined) continue;
    if (input.cancelAll === true || input.steps.get(member.id)?.status === 'failed') segments.add(member.segment);
  }
  return segments;
}

/** Whether the step's own work (not its compensation) can still change anything: what compensation waits for. */
const inFlight = (status: StepStatus | undefined): boolean =>
  status !== undefined && (IN_FLIGHT_STEP_STATUSES as readonly StepStatus[]).includes(status);
const unclaimed = (status: StepStatus | undefined): boolean =>
  status !== undefined && (CLAIMABLE_STEP_STATUSES as readonly StepStatus[]).includes(status);

/** What to do next for the run's aborting segments. */
export function decideCompensation(input: CompensationInput): CompensationDecision {
  const aborting = abortingSegments(input);
  if (aborting.size === 0) return { kind: 'none' };
  const members = input.members.filter((m) => m.segment !== undefined && aborting.has(m.segment));
  const cancel = members.filter((m) => unclaimed(input.steps.get(m.id)?.status)).map((m) => m.id);
  const running = members.filter((m) => inFlight(input.steps.get(m.id)?.status)).map((m) => m.id);
  if (running.length > 0) return { kind: 'wait', waitingFor: running, cancel };
  const order = new Map(input.members.map((m, i) => [m.id, i]));
  // Most recent completion first; a tie (same millisecond) goes by plan order, later first (a dependent comes later).
  const queue = members
    .filter((m) => m.mutating)
    .map((m) => ({ member: m, step: input.steps.get(m.id) }))
    .filter(
      (e): e is { member: CompensationMember; step: CompensationStepView } =>
        e.step !== undefined && (e.step.status === 'succeeded' || e.step.status.startsWith('compensat')),
    )
    .sort(
      (a, b) =>
        (b.step.finishedAt ?? '').localeCompare(a.step.finishedAt ?? '') ||
        (order.get(b.member.id) ?? 0) - (order.get(a.member.id) ?? 0),
    );
  const compensated: string[] = [];
  for (const { member, step } of queue) {
    switch (step.status) {
      case 'compensated':
        compensated.push(member.id);
        continue;
      case 'compensation_failed':
        return { kind: 'failed', stepId: member.id, error: step.error ?? null };
      case 'compensating':
        return { kind: 'compensate', stepId: member.id, cancel };
      default:
        if (member.compensable) return { kind: 'compensate', stepId: member.id, cancel };
        return {
          kind: 'hint',
          stepId: member.id,
          hint: member.rollbackHint ?? 'no compensation is known: undo what the step changed by hand',
          cancel,
        };
    }
  }
  if (cancel.length > 0) return { kind: 'wait', waitingFor: [], cancel };
  return { kind: 'done', compensated };
}

/**
 * A compensation runs as an execution of the step machine for a synthetic step id: `~undo~<stepId>`, and after a
 * person's n-th retry `~undo~<stepId>~r<n>` (a new execution name: the first one has ended). `~` is not allowed in
 * plan step ids, so it can never name a plan step, and the step id ends at the next `~`.
 */
export const COMPENSATION_PREFIX = '~undo~';
export const compensationStepId = (stepId: string, round = 0): string =>
  `${COMPENSATION_PREFIX}${stepId}${round > 0 ? `~r${round}` : ''}`;
export const isCompensationStepId = (id: string): boolean => id.startsWith(COMPENSATION_PREFIX);
export const compensatedStepId = (id: string): string => id.slice(COMPENSATION_PREFIX.length).split('~')[0] ?? '';

/** What a person may do about a compensation that failed for good. */
export type CompensationAction =
  | { readonly kind: 'retry' }
  /** The effect was undone by hand: the note says how. */
  | { readonly kind: 'resolve'; readonly note: string };

/**
 * Whether a person's action on a step's compensation may go ahead: only a `compensation_failed` step is retried or
 * resolved (anything else is a conflict: compensated already, under way, or never failed).
 */
export function checkCompensationAction(
  status: StepStatus | undefined,
): { readonly ok: true } | { readonly ok: false; readonly reason: string } {
  if (status === 'compensation_failed') return { ok: true };
  return {
    ok: false,
    reason:
      status === undefined
        ? 'the step has no record'
        : `the step is ${status}: only a compensation_failed step can be retried or resolved`,
  };
}
