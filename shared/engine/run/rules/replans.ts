/**
 * A final failure the replanner may answer: the decider asks for a revision once (the failure's key), or holds the
 * run for a person when the replan limit is reached or the same failure came back after a replan (no progress). The
 * run waits for the answer (ending.ts awaitsReplan): a revision, or a decline after which the failure stands; a watch
 * declines it for the replanner if no answer comes in time.
 */

import { decideReplan } from '../../replan/decide.ts';
import { failureFingerprint, mergeLineage, stepLineage } from '../../replan/fingerprint.ts';
import type { DeclineReplan, ReplanWatchExpired } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { replanCap } from './budget.ts';
import { isReplannable, pause, replanDeclines, settle } from './ending.ts';

/** `<stepId>#<generation>`: how a failure is named to the replanner and in the run's records. */
export const failureKey = (step: { readonly stepId: string; readonly generation: number }): string =>
  `${step.stepId}#${step.generation}`;

/** The code a failure nobody answered in time is declined with. */
export const REPLAN_UNANSWERED_CODE = 'E_REPLAN_UNANSWERED';

/** The no-progress fingerprint of a failed step's current failure. */
export function fingerprintOf(d: Decision, stepId: string): string {
  const step = d.step(stepId);
  const lineage = mergeLineage(...(d.run.replanLog ?? []).map((r) => r.replaces));
  return failureFingerprint({
    lineage: stepLineage(stepId, lineage),
    code: step?.error?.code ?? 'E_UNKNOWN',
    message: step?.error?.message ?? '',
  });
}

/**
 * After a final failure of `stepId`: ask for a revision, or hold the run for a person. `again`: a failure asked
 * before is asked once more (its answer waited for a held revision, which a person has now decided).
 */
export function askReplan(d: Decision, stepId: string, again = false): void {
  const step = d.step(stepId);
  const { replanWatchSeconds } = d.draft.settings;
  if (step === undefined || replanCap(d) <= 0 || !isReplannable(d, stepId) || d.run.status !== 'running') return;
  if (d.run.terminal !== undefined || d.run.cancelCompensation === true) return;
  const failure = failureKey(step);
  if (!again && (d.run.handledFailures ?? []).includes(failure)) return;
  if (pausedForReplanLimits(d, stepId)) return;
  const until = new Date(Date.parse(d.at) + replanWatchSeconds * 1000).toISOString();
  d.emit({ type: 'ReplanAsked', at: d.at, failure, until });
}

/**
 * Holds the run for a person, and says so, when the failure of `stepId` may not be replanned: the same failure came
 * back after a replan (no progress), or the run made all the replans it may.
 */
export function pausedForReplanLimits(d: Decision, stepId: string): boolean {
  const step = d.step(stepId);
  if (step === undefined) return false;
  const maxReplans = replanCap(d);
  const fingerprint = fingerprintOf(d, stepId);
  const decision = decideReplan({
    replansSoFar: d.run.replans,
    maxReplans,
    fingerprint,
    previousFingerprints: d.run.replanFingerprints ?? [],
  });
  if (decision.action === 'replan') return false;
  pause(d, decision.reason, {
    stepId,
    generation: step.generation,
    error: step.error ?? null,
    fingerprint,
    replans: d.run.replans,
    maxReplans,
    detail: decision.detail,
  });
  return true;
}

/** The failure stands: recorded once, then the run is looked at again. */
export function declineReplan(d: Decision, command: Pick<DeclineReplan, 'failure' | 'code' | 'message'>): void {
  if (replanDeclines(d).some((x) => x.failure === command.failure)) return;
  const stepId = command.failure.startsWith('~') ? '' : command.failure.slice(0, command.failure.lastIndexOf('#'));
  d.emit({ type: 'ReplanDeclined', at: d.at, failure: command.failure, stepId, ...pick(command) });
  settle(d);
}

const pick = ({ code, message }: Pick<DeclineReplan, 'code' | 'message'>) => ({ code, message });

/** The watch of a failure ran out: still failed in that generation and unanswered, it stands. */
export function replanWatchExpired(d: Decision, command: ReplanWatchExpired): void {
  const stepId = command.failure.slice(0, command.failure.lastIndexOf('#'));
  const step = d.step(stepId);
  if (step === undefined || failureKey(step) !== command.failure || step.status !== 'failed') return;
  if ([...d.draft.approvals.values()].some((a) => a.kind === 'revision' && a.status === 'pending')) return;
  declineReplan(d, {
    failure: command.failure,
    code: REPLAN_UNANSWERED_CODE,
    message: `no replan answered the failure of ${stepId} within ${d.draft.settings.replanWatchSeconds}s`,
  });
}
