/**
 * The saga's ends: a compensation execution's word about its round (undone, another attempt after a backoff, or
 * failed for good), and a person's answer to a compensation that failed for good (the run is paused
 * `compensation_failed` with the evidence): retry it, or say it was undone by hand, with a note. Each moves the saga
 * on (compensation.ts decides what is due next) and the run is looked at as a whole after it (ending.ts).
 *
 * A retry is a new round: `compensation_failed → compensating` and a new execution `~undo~<stepId>~r<round>` (the
 * earlier one has ended) with the same idempotency key, since a failed call left no completed record. A word from an
 * earlier round's execution changes nothing. A run paused for the failure reopens; a cancel with compensation stays
 * a cancel (its mark survives the reopening) and ends cancelled after the last compensation.
 */

import { stepExecutionName } from '../../../ports/executions.ts';
import {
  checkCompensationAction,
  compensatedStepId,
  compensationStepId,
  isCompensationStepId,
} from '../../compensation.ts';
import { traceEntry } from '../../trace.ts';
import type { ActOnCompensation, CompensationEnded } from '../commands.ts';
import { type Decision, refuse } from '../decision.ts';
import { advanceCompensation, startCompensation } from './compensation.ts';
import { settle } from './ending.ts';
import { reopenIfFinished } from './reopen.ts';

/** The code of a person's action on a step whose compensation has not failed, or in a run that is over (409). */
export const NOT_COMPENSATION_FAILED_CODE = 'E_NOT_COMPENSATION_FAILED';

export function compensationEnded(d: Decision, command: CompensationEnded): void {
  const stepId = isCompensationStepId(command.stepId) ? compensatedStepId(command.stepId) : command.stepId;
  const step = d.step(stepId);
  if (step?.generation !== command.generation || step.status !== 'compensating') return;
  const record = step.compensation;
  const round = record?.round ?? 0;
  const execution = stepExecutionName(d.run.runId, compensationStepId(stepId, round), step.generation);
  if (command.round !== round || command.execution !== execution) return; // an earlier round's late word
  const attempt = command.attempt ?? Math.max(1, record?.attempts ?? 1);
  const target = record?.target ?? 'unknown';
  const ref = { at: d.at, stepId, generation: step.generation };
  const trace = command.trace ?? [];
  const { outcome } = command;
  if (outcome.kind === 'retry') {
    if (attempt <= (record?.attempts ?? 0)) return; // a repeat of a word already taken
    const { error, delaySeconds } = outcome;
    const note = `compensation attempt ${attempt} failed: ${error.code} ${error.message}; attempt ${attempt + 1} in ${delaySeconds}s`;
    d.emit({
      type: 'CompensationRetrying',
      ...ref,
      attempt,
      delaySeconds,
      error,
      trace: [...trace, traceEntry('fail', note, d.at)],
    });
    return;
  }
  const evidence = {
    attempts: attempt,
    ...(command.input === undefined ? {} : { input: command.input }),
    ...(command.output === undefined ? {} : { output: command.output }),
  };
  if (outcome.kind === 'compensated')
    d.emit({
      type: 'CompensationEnded',
      ...ref,
      state: 'compensated',
      ...evidence,
      trace: [...trace, traceEntry('exec', `compensated by ${target} (attempt ${attempt})`, d.at)],
    });
  else
    d.emit({
      type: 'CompensationEnded',
      ...ref,
      state: 'compensation_failed',
      error: outcome.error,
      ...evidence,
      trace: [
        ...trace,
        traceEntry('fail', `compensation failed: ${outcome.error.code} ${outcome.error.message}`, d.at),
      ],
    });
  // The saga moves on even in a run held for a person meanwhile: settle alone would not look at a held run.
  advanceCompensation(d);
  settle(d);
}

export function actOnCompensation(d: Decision, command: ActOnCompensation): void {
  const { stepId, action, by } = command;
  const step = d.step(stepId);
  if (step === undefined) {
    d.reply = refuse(404, 'E_NOT_FOUND', `run ${d.run.runId} has no step ${stepId}`);
    return;
  }
  const check = checkCompensationAction(step.status);
  const status = d.run.status;
  const why = !check.ok ? check.reason : status === 'cancelled' || status === 'complete' ? `the run is ${status}` : '';
  if (why !== '') {
    d.reply = notFailed(stepId, why);
    return;
  }
  const held = status === 'paused' && d.run.terminal?.reason === 'compensation_failed';
  if (action.kind === 'retry') {
    startCompensation(d, stepId, (step.compensation?.round ?? 0) + 1, by);
    if (d.step(stepId)?.status !== 'compensating') {
      d.reply = notFailed(stepId, 'its capability names no compensation any more');
      return;
    }
  } else {
    const who = by ?? 'a person';
    d.emit({
      type: 'CompensationEnded',
      at: d.at,
      stepId,
      generation: step.generation,
      state: 'compensated',
      // The failure it answers stays on the record, beside the person's note.
      error: step.compensation?.error ?? undefined,
      resolution: { by, note: action.note },
      trace: [traceEntry('exec', `compensation resolved by hand by ${who}: ${action.note}`, d.at)],
    });
  }
  const reason =
    action.kind === 'retry'
      ? `the compensation of step ${stepId} is retried`
      : `the compensation of step ${stepId} was resolved by hand`;
  const reopened = held && reopenIfFinished(d, reason);
  if (action.kind === 'resolve') {
    advanceCompensation(d);
    settle(d);
  }
  d.reply = { ok: true, value: { runId: d.run.runId, stepId, status: d.step(stepId)?.status, reopened } };
}

const notFailed = (stepId: string, reason: string) =>
  refuse(
    409,
    NOT_COMPENSATION_FAILED_CODE,
    `the compensation of step ${stepId} cannot be retried or resolved: ${reason}`,
  );
