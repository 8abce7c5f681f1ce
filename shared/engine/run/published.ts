/**
 * What the outside is told of a run's events: the published catalog (shared/events/catalog.ts), one schema per
 * detail-type, bounded (no detail grows with the plan or with what a capability says). Derived from each event and
 * the run as it is right after it; the shell commits them with the events (the outbox), so a change and its
 * announcement land together.
 */
import { boundedDetail, stepsInvalidatedParts } from '../../events/bounded-details.ts';
import type { EventDetail, EventType } from '../../events/catalog.ts';
import type { DomainEvent } from '../../ports/events.ts';
import type { RunEvent } from './events.ts';
import type { DraftState } from './state.ts';

/** `requestedBy` for a detail, when it is known. */
const requested = (by: string | null | undefined) => (by === undefined || by === null ? {} : { requestedBy: by });

/** Who asked for the cancellation a run ended by (one with compensation ends long after it was asked for). */
const cancelledBy = (after: DraftState): string | undefined =>
  after.run.status === 'cancelled' ? after.run.cancelRequestedBy : undefined;

const published = <T extends EventType>(type: T, detail: EventDetail<T>): DomainEvent => ({
  detailType: type,
  detail: boundedDetail(detail),
});

/** The published events of `event`; `after` is the run once the event is applied. */
export function publishedOf(after: DraftState, event: RunEvent): DomainEvent[] {
  const runId = after.run.runId;
  const stepRef = (e: { stepId: string; generation: number }) => ({
    runId,
    stepId: e.stepId,
    generation: e.generation,
  });
  switch (event.type) {
    case 'RunAdmitted':
      return [published('RunAdmitted', { runId })];
    case 'RunStarted':
      return [
        published('RunStarted', {
          runId,
          objective: after.run.objective,
          revision: event.plan.revision,
          steps: after.plan?.executable.length ?? 0,
        }),
      ];
    case 'StepStarted':
      return [
        published('StepStarted', {
          ...stepRef(event),
          target: after.plan?.byId.get(event.stepId)?.target ?? null,
          attempt: 1,
        }),
      ];
    case 'StepRetrying':
      return [
        published('StepRetrying', {
          ...stepRef(event),
          attempt: event.attempt + 1,
          delaySeconds: event.delaySeconds,
          error: event.error,
        }),
      ];
    case 'StepSucceeded':
      return [
        published('StepSucceeded', { ...stepRef(event), attempts: event.attempts, confidence: event.confidence }),
      ];
    case 'StepFailed':
      return [
        published('StepFailed', { ...stepRef(event), attempts: event.attempts, error: event.error, final: true }),
      ];
    case 'StepSkipped':
      return [published('StepSkipped', { ...stepRef(event), reason: event.reason })];
    case 'StepBlocked':
      return [
        published('StepBlocked', {
          ...stepRef(event),
          blockedBy: [...event.blockedBy],
          blockedByCount: event.blockedByCount,
        }),
      ];
    case 'CompensationStarted':
      return [
        published('StepCompensation', {
          ...stepRef(event),
          state: 'compensating',
          target: event.target,
          ...(event.by === undefined ? {} : { by: event.by }),
        }),
      ];
    case 'CompensationEnded': {
      const target = after.steps.get(event.stepId)?.compensation?.target ?? '';
      return [
        published('StepCompensation', {
          ...stepRef(event),
          state: event.state,
          target,
          ...(event.error === undefined ? {} : { error: event.error }),
          ...(event.resolution === undefined ? {} : { by: event.resolution.by }),
        }),
      ];
    }
    case 'ApprovalRequested':
    case 'RevisionHeld': {
      const { approval } = event;
      if (event.type === 'RevisionHeld' && !event.announced) return [];
      return [
        published('ApprovalRequested', {
          runId,
          stepId: approval.stepId,
          generation: approval.generation,
          approvalId: approval.approvalId,
          kind: approval.kind,
          deadline: approval.deadline,
        }),
      ];
    }
    case 'ApprovalDecided': {
      const approval = after.approvals.get(event.approvalId);
      if (approval === undefined || event.announced === false) return [];
      const decision = event.status === 'approved' ? 'approve' : event.status === 'rejected' ? 'reject' : 'edit';
      return [
        published('ApprovalDecided', {
          runId,
          stepId: approval.stepId,
          generation: approval.generation,
          approvalId: approval.approvalId,
          decision,
          by: event.by,
        }),
      ];
    }
    case 'ApprovalClosed': {
      const approval = after.approvals.get(event.approvalId);
      if (!event.announced || approval === undefined) return [];
      return [
        published('ApprovalDecided', {
          runId,
          stepId: approval.stepId,
          generation: approval.generation,
          approvalId: approval.approvalId,
          decision: 'expired',
        }),
      ];
    }
    case 'PlanRevised':
      return [
        published('PlanRevised', {
          runId,
          revision: event.plan.revision,
          reason: event.reason,
          ...requested(event.requestedBy),
        }),
      ];
    case 'InvalidationApplied':
      if (!['running', 'paused'].includes(after.run.status)) return [];
      return stepsInvalidatedParts(runId, event.stepIds, event.reason).map((part) =>
        published('StepsInvalidated', { ...part, ...requested(event.requestedBy) }),
      );
    case 'RunReopened':
      return [published('RunReopened', { runId, reopened: event.opening, reason: event.reason })];
    case 'RunFinished':
      return [
        published('RunFinished', {
          runId,
          state: event.terminal.state,
          reason: event.terminal.reason,
          ...requested(event.requestedBy ?? cancelledBy(after)),
        }),
      ];
    case 'CancelBegun':
      return [];
    case 'BudgetRaised':
      return [
        published('BudgetRaised', {
          runId,
          limits: { ...event.limits },
          previous: { ...event.previous },
          requestedBy: event.requestedBy,
        }),
      ];
    case 'BudgetWarned':
      return [
        published('BudgetThreshold', {
          runId,
          ...(event.stepId === undefined ? {} : { stepId: event.stepId }),
          dimension: event.dimension,
          limit: event.limit,
          spent: event.spent,
          warnAt: event.warnAt,
        }),
      ];
    case 'BudgetExhausted':
      return [
        published('BudgetExhausted', {
          runId,
          revision: event.revision,
          onExhausted: event.onExhausted,
          exhausted: event.exhausted.map((f) => ({ ...f })),
        }),
      ];
    default:
      return [];
  }
}
