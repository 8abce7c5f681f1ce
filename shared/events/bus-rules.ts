/**
 * The rules that drive cairn, defined once: CDK turns them into EventBridge rules on the deployed bus and the
 * embedded bus matches the same patterns in process.
 */

import { EVENT_SOURCE } from '../ports/events.ts';
import type { EventPattern } from './pattern-match.ts';

/**
 * The stepId prefix of a revision approval (engine/run/rules/revision-proposals.ts; `~` is never in a plan step id).
 * No rule matches it any more: a held revision expires by its own timer in the run (RevisionWaitExpired).
 */
export const REVISION_APPROVAL_STEP = '~revision~';

export interface BusRule {
  /** Construct id / local subscriber key. */
  readonly name: string;
  readonly description: string;
  readonly pattern: EventPattern;
  /** Which handler the rule targets (a function key in infra, a subscriber locally). */
  readonly target: 'Replanner' | 'Invalidator' | 'Notifier';
}

export const BUS_RULES: readonly BusRule[] = [
  {
    name: 'StepFailedToReplanner',
    description: 'A step failed after its retries, failed verification or was rejected: ask for a scoped replan.',
    pattern: { source: [EVENT_SOURCE], 'detail-type': ['StepFailed'], detail: { final: [true] } },
    target: 'Replanner',
  },
  {
    name: 'BudgetExhaustedToReplanner',
    description: 'The plan budget ran out under onExhausted: replan: ask once for a cheaper revision.',
    pattern: {
      source: [EVENT_SOURCE],
      'detail-type': ['BudgetExhausted'],
      detail: { onExhausted: ['replan'] },
    },
    target: 'Replanner',
  },
  {
    name: 'BudgetRaisedToReplanner',
    description:
      "A person raised a run's replan limit: the replanner is asked again about the failures that stand unanswered.",
    pattern: {
      source: [EVENT_SOURCE],
      'detail-type': ['BudgetRaised'],
      detail: { limits: { maxReplans: [{ exists: true }] } },
    },
    target: 'Replanner',
  },
  {
    name: 'ResourceChangedToInvalidator',
    description: 'An outside resource changed: mark every step watching it stale.',
    pattern: { 'detail-type': ['ResourceChanged'], detail: { resourceKey: [{ exists: true }] } },
    target: 'Invalidator',
  },
];

/**
 * The approval notifier's rule (shared/notify/notifier.ts): not one of the rules that drive a run, and only where
 * notifications are configured (`--notify-url`, CDK context `notifyUrls`). The approvals' own events, and the run
 * decisions that close approvals without announcing each one.
 */
export const NOTIFY_RULE: BusRule = {
  name: 'ApprovalsToNotifier',
  description: 'Approvals requested, decided or closed: tell the people who decide them (signed webhooks).',
  pattern: {
    source: [EVENT_SOURCE],
    'detail-type': ['ApprovalRequested', 'ApprovalDecided', 'StepsInvalidated', 'PlanRevised', 'RunFinished'],
  },
  target: 'Notifier',
};
