/**
 * What the shell does because of an event: start or stop an execution, answer a task token, wake the run later.
 * Derived from each event and the run as it was just before it (decision.ts calls it as it emits), kept with the
 * events when they commit, and performed once they have: every effect is safe to repeat (deterministic execution
 * names, a closed token is no error), so the shell performs a committed batch's effects again after a crash.
 */

import { createHash } from 'node:crypto';
import { tenantOf } from '../../config/defaults.ts';
import type { StepError } from '../../plan/schema.ts';
import { nameSafe, runExecutionName, stepExecutionInput } from '../../ports/executions.ts';
import type { StepRecord } from '../../ports/store.ts';
import { recordedReply } from '../approval-request.ts';
import { compensationStepId } from '../compensation.ts';
import type { AttemptEnding } from '../step-lifecycle.ts';
import type { DeferredStart, RunCommand } from './commands.ts';
import type { RunEvent } from './events.ts';
import type { DraftState } from './state.ts';
import { stepBrief } from './step-brief.ts';

export type Effect =
  /** Start an execution of the step machine (a step's generation, a compensation), named deterministically. */
  | {
      readonly kind: 'startStep';
      readonly name: string;
      readonly input: Readonly<Record<string, unknown>>;
      /** A start deferred before (StartsRetried): how often, so a further throttle backs off longer. */
      readonly retry?: number;
    }
  /** A new run execution waits for a reopened run. */
  | { readonly kind: 'startRun'; readonly name: string; readonly input: Readonly<Record<string, unknown>> }
  /** Stop the execution of a generation that no longer counts (its late words are ignored anyway). */
  | { readonly kind: 'stopStep'; readonly name: string; readonly error: StepError }
  /** Answer a waiting task token (a step's wait for a person, the run machine's wait). */
  | { readonly kind: 'answerToken'; readonly token: string; readonly output: Readonly<Record<string, unknown>> }
  /**
   * Close a person's wait's attempt (a gate's, a review's) if it is still recorded `running`: its step's generation
   * ended without the wait's execution judging it (expired, cancelled, invalidated). A judged wait closed it already.
   */
  | {
      readonly kind: 'closeAttempt';
      readonly stepId: string;
      readonly generation: number;
      readonly attempt: number;
      readonly ending: AttemptEnding;
    }
  /** Deliver `command` to the run at `at` (a watch, a deadline): by a timer execution named `name`. */
  | { readonly kind: 'schedule'; readonly name: string; readonly at: string; readonly command: RunCommand }
  /**
   * The run's slot among its tenant's running runs (shared/services/admission.ts): `release` it when the run ends
   * (and admit the next queued run), take it again (`reenter`) when a finished run reopens. Performed after the
   * commit like every effect, so a crash between the run's end and the next run's admission only delays it: the
   * batch is delivered again and whoever loads the run performs it again; a release of a run that holds no slot
   * frees nothing.
   */
  | {
      readonly kind: 'admission';
      readonly action: 'release' | 'reenter';
      readonly tenant: string;
      readonly createdAt: string;
    };

/** The run execution that waits for opening `opening` of a run (the first has no suffix). */
export const runExecutionNameOf = (runId: string, opening: number): string =>
  opening === 0 ? runExecutionName(runId) : runExecutionName(`${runId}-o${opening}`);

/** The opening a run execution's name stands for (0: the first execution). */
export function openingOf(runId: string, executionName: string): number {
  const base = runExecutionName(runId);
  if (executionName === base) return 0;
  for (let opening = 1; opening < 10_000; opening++)
    if (runExecutionNameOf(runId, opening) === executionName) return opening;
  return -1;
}

function admissionEffect(before: DraftState, action: 'release' | 'reenter'): Effect {
  return { kind: 'admission', action, tenant: tenantOf(before.run), createdAt: before.run.createdAt };
}

/** A timer's execution name: one per run and purpose, so scheduling twice is harmless. */
const timerName = (runId: string, purpose: string): string => `t-${nameSafe(runId)}-${nameSafe(purpose)}`.slice(0, 80);

/** Names a set of deferred starts in a timer's name: the same deferral scheduled twice is one timer. */
const startsDigest = (starts: readonly DeferredStart[]): string =>
  createHash('sha256')
    .update(starts.map((start) => start.execution).join('\n'))
    .digest('hex')
    .slice(0, 16);

const IN_FLIGHT = new Set(['running', 'retrying', 'awaiting_approval']);

/** A waiting step's open attempt, closed as `ending` says (nothing for a step that does not wait for a person). */
function closeWait(before: DraftState, step: StepRecord, ending: AttemptEnding): Effect[] {
  const { stepId, generation } = step;
  // A gate records its attempt `running` before it waits: one closed while it runs may have recorded it already
  // (else the gate, reading its step after recording, closes it itself).
  const gate = step.status === 'running' && (before.plan?.byId.get(stepId)?.target ?? '').startsWith('human:');
  if (step.status !== 'awaiting_approval' && !gate) return [];
  return [{ kind: 'closeAttempt', stepId, generation, attempt: Math.max(1, step.attempts), ending }];
}

/** The effects of `event`, given the run just before it. */
export function effectsOf(before: DraftState, event: RunEvent): Effect[] {
  const runId = before.run.runId;
  switch (event.type) {
    case 'StepStarted':
      return [
        {
          kind: 'startStep',
          name: event.execution,
          input: stepExecutionInput(
            { runId, stepId: event.stepId, generation: event.generation },
            stepBrief(before.plan, event.stepId),
          ),
        },
      ];
    case 'CompensationStarted':
      return [
        {
          kind: 'startStep',
          name: event.execution,
          input: stepExecutionInput({
            runId,
            stepId: compensationStepId(event.stepId, event.round),
            generation: event.generation,
          }),
        },
      ];
    case 'StepMoved':
    case 'StepClosed':
    case 'StepSuperseded': {
      const step = before.steps.get(event.stepId);
      if (step?.claimedBy === undefined || !IN_FLIGHT.has(step.status)) return [];
      const error: StepError =
        event.type === 'StepMoved'
          ? {
              code: 'E_SUPERSEDED',
              message: `step ${event.stepId} was invalidated: generation ${event.generation} supersedes it`,
              retryable: false,
            }
          : event.error;
      const ending: AttemptEnding =
        event.type === 'StepClosed' ? { kind: 'cancelled', error } : { kind: 'invalidated', error };
      return [{ kind: 'stopStep', name: step.claimedBy, error }, ...closeWait(before, step, ending)];
    }
    case 'StepFailed': {
      const step = before.steps.get(event.stepId);
      if (step === undefined) return [];
      const expired = event.error.code === 'E_APPROVAL_EXPIRED';
      return closeWait(before, step, { kind: expired ? 'expired' : 'failed', error: event.error });
    }
    case 'ApprovalDecided': {
      const approval = before.approvals.get(event.approvalId);
      if (approval === undefined || approval.taskToken === '-') return [];
      return [
        {
          kind: 'answerToken',
          token: approval.taskToken,
          output: {
            decision: event.status === 'approved' ? 'approve' : event.status === 'rejected' ? 'reject' : 'edit',
            ...(event.output === undefined ? {} : { output: event.output }),
            ...(event.comment === undefined ? {} : { comment: event.comment }),
            by: event.by,
          },
        },
      ];
    }
    case 'WaitAnswered': {
      const { answer } = event;
      const approval = answer.kind === 'decision' ? before.approvals.get(answer.approvalId) : undefined;
      const reply =
        approval === undefined
          ? {
              decision: 'reject',
              comment: answer.kind === 'released' ? answer.reason : 'the step no longer waits for this decision',
              by: 'cairn',
            }
          : recordedReply(approval);
      return reply === undefined ? [] : [{ kind: 'answerToken', token: event.token, output: { ...reply } }];
    }
    case 'DecisionRedelivered': {
      const approval = before.approvals.get(event.approvalId);
      const decision = approval === undefined ? undefined : recordedReply(approval);
      return [
        {
          kind: 'startStep',
          name: event.execution,
          input: {
            ...stepExecutionInput(
              { runId, stepId: event.stepId, generation: event.generation },
              stepBrief(before.plan, event.stepId),
            ),
            next: { action: 'await', attempt: event.attempt, kind: approval?.kind ?? 'approval' },
            decision: decision ?? null,
          },
        },
      ];
    }
    case 'RunAdmitted':
      return [{ kind: 'startRun', name: runExecutionName(runId), input: { runId } }];
    case 'RunFinished': {
      const token = before.run.waiterToken;
      const answer: Effect[] = token === undefined ? [] : [{ kind: 'answerToken', token, output: { finished: true } }];
      // A paused run keeps its slot: a person may move it on at any time.
      return event.terminal.state === 'paused' ? answer : [...answer, admissionEffect(before, 'release')];
    }
    case 'RunReopened':
      return [
        {
          kind: 'startRun',
          name: runExecutionNameOf(runId, event.opening),
          input: { runId, resume: true, started: { deadlineSeconds: before.settings.runDeadlineSeconds } },
        },
        // A paused run reopening held its slot all along; an ended one gave it back.
        ...(before.run.status === 'paused' ? [] : [admissionEffect(before, 'reenter')]),
      ];
    case 'ReplanAsked':
      return [
        {
          kind: 'schedule',
          name: timerName(runId, `replan-${event.failure}-${event.until}`),
          at: event.until,
          command: { kind: 'ReplanWatchExpired', at: event.until, failure: event.failure },
        },
      ];
    case 'RevisionHeld':
      return [
        {
          kind: 'schedule',
          name: timerName(runId, event.approval.approvalId),
          at: event.approval.deadline,
          command: { kind: 'RevisionWaitExpired', at: event.approval.deadline, approvalId: event.approval.approvalId },
        },
      ];
    case 'StartsDeferred':
      return [
        {
          kind: 'schedule',
          name: timerName(runId, `starts-${event.retry}-${startsDigest(event.starts)}`),
          at: event.until,
          command: { kind: 'RetryStarts', at: event.until, starts: event.starts, retry: event.retry },
        },
      ];
    case 'StartsRetried':
      return event.starts.map((start) => ({
        kind: 'startStep',
        name: start.execution,
        input: start.input,
        retry: event.retry,
      }));
    case 'WaiterSet': {
      // The run finished before its execution began to wait: the wait is answered at once.
      const finished =
        before.run.terminal !== undefined || ['complete', 'failed', 'cancelled'].includes(before.run.status);
      return finished ? [{ kind: 'answerToken', token: event.token, output: { finished: true } }] : [];
    }
    default:
      return [];
  }
}
