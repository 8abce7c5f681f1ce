/**
 * Who did what to a run after it started: the events that record a person's (or a webhook's) change carry who asked,
 * and the run keeps the last RUN_ACTIONS_KEPT of them (`actions` on the run record, shown by GET /runs/{id}) so that
 * a run's page answers "who cancelled this, who raised its budget" without reading its whole audit log. Derived from
 * the event alone, in evolve: replaying a run's log gives the same list.
 */
import { clipMessage } from '../../plan/bounded-text.ts';
import type { RunAction } from '../../ports/records/runs.ts';
import type { BudgetRaised, RunEvent } from './events.ts';

/** How many actions a run keeps (older ones stay in its audit log). */
export const RUN_ACTIONS_KEPT = 100;

/** An action's one-line detail stays short: the run record holds up to RUN_ACTIONS_KEPT of them. */
const DETAIL_CHARS = 200;

const LIMIT_ORDER = ['maxTokens', 'maxCostUsd', 'maxSeconds', 'maxReplans'] as const;

/** `maxTokens 1000 → 5000, maxReplans 2 → 4`: what a BudgetRaised changed. */
export function describeRaise(event: Pick<BudgetRaised, 'limits' | 'previous'>): string {
  return LIMIT_ORDER.filter((name) => event.limits[name] !== undefined)
    .map((name) => `${name} ${event.previous[name] ?? 'none'} → ${event.limits[name]}`)
    .join(', ');
}

const action = (
  type: RunAction['type'],
  requestedBy: string | null | undefined,
  at: string,
  extra: { stepId?: string | undefined; detail?: string | undefined } = {},
): RunAction => ({
  type,
  requestedBy: requestedBy ?? null,
  at,
  ...(extra.stepId === undefined ? {} : { stepId: extra.stepId }),
  ...(extra.detail === undefined ? {} : { detail: clipMessage(extra.detail, DETAIL_CHARS) }),
});

/** The action an event records, if it records one. */
export function actionOf(event: RunEvent): RunAction | undefined {
  switch (event.type) {
    case 'BudgetRaised':
      return action('budget', event.requestedBy, event.at, { detail: describeRaise(event) });
    case 'CancelBegun':
      return action('cancel', event.by, event.at, { detail: 'cancel with compensation' });
    case 'RunFinished':
      return event.requestedBy === undefined ? undefined : action('cancel', event.requestedBy, event.at);
    case 'PlanRevised':
      return event.requestedBy === undefined
        ? undefined
        : action('replan', event.requestedBy, event.at, {
            detail: `revision ${event.plan.revision}: ${event.reason}`,
          });
    case 'InvalidationApplied':
      return action('invalidate', event.requestedBy, event.at, {
        stepId: event.root,
        detail: `${event.stepIds.length} step(s): ${event.reason}`,
      });
    case 'CompensationStarted':
      return event.by === undefined
        ? undefined
        : action('compensation', event.by, event.at, { stepId: event.stepId, detail: 'retry' });
    case 'CompensationEnded':
      return event.resolution === undefined
        ? undefined
        : action('compensation', event.resolution.by, event.at, {
            stepId: event.stepId,
            detail: `resolved by hand: ${event.resolution.note}`,
          });
    default:
      return undefined;
  }
}

/** The run's actions with `next` appended, the oldest dropped past RUN_ACTIONS_KEPT. */
export const withAction = (actions: readonly RunAction[] | undefined, next: RunAction): RunAction[] =>
  [...(actions ?? []), next].slice(-RUN_ACTIONS_KEPT);
