/**
 * Whether a failure may be replanned: a run gets at most `maxReplans` replans, and a replan that led to a failure
 * already seen (same fingerprint) has made no progress. Either way the run pauses for a person, with the reason.
 */
import { DEFAULT_MAX_REPLANS } from '../../config/defaults.ts';

export { DEFAULT_MAX_REPLANS };

export interface ReplanBudget {
  /** Replans this run has already made. */
  readonly replansSoFar: number;
  /** Default DEFAULT_MAX_REPLANS. */
  readonly maxReplans?: number;
  /** The fingerprint of the failure at hand (failureFingerprint). */
  readonly fingerprint: string;
  /** The fingerprints of the failures earlier replans answered. */
  readonly previousFingerprints: readonly string[];
}

export type ReplanDecision =
  | { readonly action: 'replan' }
  | { readonly action: 'pause'; readonly reason: 'max_replans' | 'no_progress'; readonly detail: string };

/** A repeated failure is reported as no progress even when the budget is also spent: it is the better diagnosis. */
export function decideReplan(budget: ReplanBudget): ReplanDecision {
  const max = Math.max(0, Math.floor(budget.maxReplans ?? DEFAULT_MAX_REPLANS));
  const done = Math.max(0, Math.floor(budget.replansSoFar));
  if (budget.previousFingerprints.includes(budget.fingerprint))
    return {
      action: 'pause',
      reason: 'no_progress',
      detail: `the same failure came back after ${done} replan${done === 1 ? '' : 's'} (${budget.fingerprint})`,
    };
  if (done >= max)
    return {
      action: 'pause',
      reason: 'max_replans',
      detail: `${done} replan${done === 1 ? '' : 's'} made, the limit is ${max}`,
    };
  return { action: 'replan' };
}
