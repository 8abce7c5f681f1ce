/**
 * The coordinator: the state machines' words, told to the run's decider. The run machine's decision points (the plan
 * rejected, the run started with its revision 1, its waiting token, its end) and the step machine's waits for people
 * and its record of a crashed attempt each become a command in the run's mailbox; what the machine needs back (the
 * run's deadline, where a crashed attempt goes next) is worked out here without deciding anything.
 */
import { openingOf } from '../engine/run/effects.ts';
import { validateUnlessStamped } from '../plan/stamp.ts';
import type { Coordinator, CoordinatorDeps, WorkflowError } from './coordinator-types.ts';
import { createInterpreter, describeWorkflowError } from './interpreter.ts';
import { recordFailedAttempt } from './step/failed-attempt.ts';
import { decisionExpired, requestDecision } from './step/gate.ts';

export type * from './coordinator-types.ts';

/** The opening a run execution's word is about (0 when it does not say which execution it is). */
const openingFrom = (runId: string, execution: string | null | undefined): number =>
  typeof execution === 'string' ? Math.max(0, openingOf(runId, execution)) : 0;

const describe = (error: WorkflowError): { code: string; message: string } => describeWorkflowError(error);

export function createCoordinator(deps: CoordinatorDeps): Coordinator {
  const ctx = createInterpreter(deps);
  const { mailbox } = deps;
  return {
    async rejectPlan(request) {
      await mailbox.send(request.runId, {
        kind: 'RejectPlan',
        reason: 'invalid_plan',
        evidence: { errors: request.errors.map((e) => ({ ...e })) },
        opening: openingFrom(request.runId, request.execution),
      });
    },
    async failRun(request) {
      await mailbox.send(request.runId, {
        kind: 'RejectPlan',
        reason: 'planning_failed',
        evidence: { error: describe(request.error) },
        opening: openingFrom(request.runId, request.execution),
      });
    },
    async startRun(request) {
      const result = { deadlineSeconds: deps.config.runDeadlineSeconds };
      const run = await ctx.getRun(request.runId);
      if (run.status !== 'planning') return result;
      // Revision 1 is the validated candidate (checked again unless its stamp says it was against this catalog).
      const candidate = run.candidatePlan ?? run.submittedPlan;
      const checked =
        candidate === undefined
          ? { valid: false as const, errors: [{ code: 'E_FIELD', path: '', message: 'the run has no plan to start' }] }
          : validateUnlessStamped(
              candidate,
              run.planStamp,
              deps.catalog,
              { maxSteps: deps.config.maxSteps, maxDepth: deps.config.maxDepth },
              1,
            );
      if (!checked.valid) {
        await mailbox.send(run.runId, {
          kind: 'RejectPlan',
          reason: 'invalid_plan',
          evidence: { errors: checked.errors.map((e) => ({ ...e })) },
          opening: 0,
        });
        return result;
      }
      await mailbox.send(run.runId, { kind: 'StartRun', plan: checked.plan });
      return result;
    },
    async awaitRun(request) {
      await mailbox.send(request.runId, {
        kind: 'AwaitRun',
        token: request.taskToken,
        opening: openingFrom(request.runId, request.execution),
      });
    },
    async finalizeRun(request) {
      const timedOut = request.timedOut !== undefined && request.timedOut !== null;
      const failed = request.error === undefined || request.error === null ? undefined : describe(request.error);
      await mailbox.send(request.runId, {
        kind: 'FinalizeRun',
        opening: openingFrom(request.runId, request.execution),
        timedOut,
        ...(failed === undefined ? {} : { error: failed.message }),
      });
    },
    recordFailure: (request) =>
      recordFailedAttempt(
        ctx,
        { ...request, executionId: request.execution ?? '' },
        request.attempt,
        request.error,
        request.previous,
        request.brief,
      ),
    async requestApproval(request) {
      if (request.kind !== 'approval' && request.kind !== 'review') return;
      await requestDecision(ctx, { ...request, kind: request.kind, execution: request.execution ?? '' });
    },
    async expireApproval(request) {
      const kind = request.kind === 'review' ? 'review' : 'approval';
      await decisionExpired(ctx, { ...request, kind, execution: request.execution ?? '' });
    },
  };
}
