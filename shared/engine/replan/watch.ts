/**
 * The replan watch: the safety net under the replanner's answer to a final failure. While replanning is on, a run
 * whose step failed for good waits for that answer (a revision, a pause, or a decline that lets the failure stand:
 * awaitsReplan), with nothing else open to end it. The answer comes on StepFailed, which reaches the replanner a
 * few times at most (EventBridge's delivery, then Lambda's two async retries; the embedded bus's three), each tried
 * in place while the store's failure may pass. A throttle storm longer than all of them, or a replanner that crashed
 * holding the failure, leaves the run `running` until its deadline (a day by default), with every step ended.
 *
 * So each such failure gets a watch: an execution of the step machine for the synthetic step `~replan~<stepId>`
 * (same generation), started with the failure's follow-ups. RunStep answers it `await` until the watch's time after
 * the failure, past every delivery; AwaitDecision then times out (no token is ever answered) and DecisionExpired
 * looks: a failure still unanswered is taken as the replanner takes it, and declined (E_REPLAN_UNANSWERED), so the
 * failure stands and the run ends `failed` with the reason in its evidence. A failure the replanner still holds is
 * left to it (and to the deadline): only one holder answers a failure, so a decline never races a revision.
 *
 * Pure: what the watch does, from what it read.
 */

/** The prefix of a replan watch's synthetic step id (`~` is never in a plan step id). */
export const REPLAN_WATCH_PREFIX = '~replan~';

export const replanWatchStepId = (stepId: string): string => `${REPLAN_WATCH_PREFIX}${stepId}`;
export const isReplanWatchStepId = (id: string): boolean => id.startsWith(REPLAN_WATCH_PREFIX);
/** The failed step a watch's synthetic step id watches. */
export const watchedStepId = (id: string): string => id.slice(REPLAN_WATCH_PREFIX.length);

/** The code of a failure declined because the replanner never answered it. */
export const REPLAN_UNANSWERED_CODE = 'E_REPLAN_UNANSWERED';

export interface ReplanWatchInput {
  /** The run as read now: whether steps still move in it, and whether it holds a terminal record (a pause). */
  readonly run: { readonly moving: boolean; readonly terminal: boolean; readonly cancelling: boolean };
  /** The watched step as read now (absent: it is gone from the run). */
  readonly step?: {
    readonly status: string;
    readonly generation: number;
    /** When the failure was written (ISO); absent: unknown, counted from now. */
    readonly finishedAt?: string | undefined;
  };
  /** The generation whose failure is watched. */
  readonly generation: number;
  /** The failure is recorded as declined (the replanner's answer, or an earlier watch's). */
  readonly declined: boolean;
  /** A revision waits for a person's approval: the failures wait with it, and its decision or expiry answers them. */
  readonly revisionPending: boolean;
  readonly now: number;
  readonly watchSeconds: number;
}

export type ReplanWatchMove =
  /** Nothing to watch: the failure was answered (revised, declined, the run paused or ended) or waits for a person. */
  | { readonly kind: 'answered' }
  /** Too early to tell: look again after this many seconds (a positive whole number, as Step Functions takes). */
  | { readonly kind: 'wait'; readonly seconds: number }
  /** Past the watch's time and unanswered: take the failure and decline it. */
  | { readonly kind: 'unanswered' };

export function decideReplanWatch(input: ReplanWatchInput): ReplanWatchMove {
  const { run, step } = input;
  if (!run.moving || run.terminal || run.cancelling) return { kind: 'answered' };
  // A revision restarts or supersedes the failed step (a new generation); a person's invalidation does too.
  if (step?.status !== 'failed' || step.generation !== input.generation) return { kind: 'answered' };
  if (input.declined || input.revisionPending) return { kind: 'answered' };
  const failedAt = step.finishedAt === undefined ? Number.NaN : Date.parse(step.finishedAt);
  const since = Number.isFinite(failedAt) ? Math.max(0, input.now - failedAt) : 0;
  const left = input.watchSeconds * 1000 - since;
  if (left > 0) return { kind: 'wait', seconds: Math.max(1, Math.ceil(left / 1000)) };
  return { kind: 'unanswered' };
}
