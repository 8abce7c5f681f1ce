/**
 * People in the loop, on the step execution's side: a human gate records its attempt 1 (the input the approver
 * sees) and waits; the machine's AwaitDecision holds a task token, which this side hands to the run's decider with
 * what the person is shown (AwaitDecision); a wait that timed out is told too (DecisionTimedOut). A decision comes
 * back on the token and is judged here like any output: an approval's output, the held result of a review, an edit,
 * verified against the contract and the success criteria; a rejection fails the attempt. The decider decides what
 * the step becomes.
 */
import type { ApprovalPresentation } from '../../engine/run/commands.ts';
import type { StepBrief } from '../../engine/run/step-brief.ts';
import { upstreamOutputs } from '../../engine/scheduling.ts';
import { closeAttempt, decideAttemptOutcome, orphanedAttemptEnding } from '../../engine/step-lifecycle.ts';
import { candidateOutput, checkCriteriaSchema, decideVerdict, type HumanDecision } from '../../engine/verify.ts';
import { recordApprovalWait } from '../../events/metrics.ts';
import type { AttemptRecord, StepRecord } from '../../ports/store.ts';
import { closeAttemptOf } from '../attempt-closing.ts';
import { evaluateAssertion, evaluatorOf } from '../coordinator-inputs.ts';
import type { StepNext } from '../coordinator-types.ts';
import { type Interpreter, kindOf } from '../interpreter.ts';
import { policyOf } from './failed-attempt.ts';
import { done, type InFlight, report } from './report.ts';
import { currentBrief, stepApprovalWindow, stepContext } from './step-records.ts';

/** The machine waits for a person: how long, for which attempt, and what kind of decision. */
export const awaitPerson = (ctx: Interpreter, flight: InFlight, n: number, kind: 'approval' | 'review'): StepNext => ({
  action: 'await',
  attempt: n,
  kind,
  timeoutSeconds: stepApprovalWindow(flight.planStep, ctx.deps.config, flight.records, ctx.now()).seconds,
});

/** A human gate has no capability: its attempt 1 records the evaluated input the approver sees, then it waits. */
export async function awaitGate(ctx: Interpreter, flight: InFlight, input: unknown): Promise<StepNext> {
  const { step, planStep } = flight;
  const record: AttemptRecord = {
    runId: step.runId,
    stepId: step.stepId,
    generation: step.generation,
    attempt: 1,
    target: planStep.target ?? '',
    startedAt: ctx.now(),
    outcome: 'running',
    input: input ?? null,
    revision: flight.records.run.revision,
    evidence: { gate: true, execution: step.claimedBy ?? null },
  };
  await ctx.deps.store.putAttempt(record);
  // The step may have closed while the record was written (its run ended, it moved on): the attempt closes now.
  const ending = orphanedAttemptEnding(await ctx.deps.store.getStep(step.runId, step.stepId), record);
  if (ending !== undefined) {
    await closeAttemptOf(ctx, step, { generation: step.generation, attempt: 1 }, ending);
    return done(1);
  }
  return awaitPerson(ctx, flight, 1, 'approval');
}

/**
 * A person's decision on a gate or a review: the output it leaves (an approval, the held result, an edit) is
 * verified like any other; a rejection fails the attempt. The gate's attempt record closes with the decision.
 */
export async function judge(
  ctx: Interpreter,
  flight: InFlight,
  n: number,
  record: AttemptRecord | undefined,
  decision: HumanDecision,
): Promise<StepNext> {
  const { records, step, planStep } = flight;
  const target = planStep.target ?? '';
  const result =
    record && record.outcome !== 'failed' && record.output !== undefined ? { output: record.output } : undefined;
  const candidate = candidateOutput({ kind: kindOf(planStep), decision, result });
  let verdict = candidate.ok ? undefined : candidate.verdict;
  if (candidate.ok) {
    const context = await stepContext(ctx, records, step, planStep.successCriteria?.assert !== undefined);
    verdict = decideVerdict({
      decision,
      contract: ctx.deps.catalog.validateOutput(target, candidate.output),
      criteria: checkCriteriaSchema(planStep, candidate.output),
      assertion: await evaluateAssertion(
        evaluatorOf(ctx.deps),
        planStep,
        { objective: records.run.objective, outputs: context.outputs },
        candidate.output,
      ),
      confidence: record?.confidence,
      confidenceThreshold: planStep.confidenceThreshold,
    });
  }
  const outcome = decideAttemptOutcome(n, { verdict: verdict ?? { verdict: 'pass' } }, policyOf(ctx, flight));
  const now = ctx.now();
  const open: AttemptRecord = {
    ...(record ?? { runId: step.runId, stepId: step.stepId, generation: step.generation, attempt: n, target }),
    startedAt: record?.startedAt ?? now,
    outcome: 'running',
    revision: record?.revision ?? records.run.revision,
    evidence: record?.evidence ?? {},
  };
  const error = verdict?.verdict === 'fail' ? verdict.error : undefined;
  const ending =
    outcome.kind === 'succeed' && candidate.ok
      ? ({ kind: 'decided', decision, verdict: 'pass', output: candidate.output } as const)
      : ({ kind: 'decided', decision, verdict: 'fail', ...(error ? { error } : {}) } as const);
  const closed = closeAttempt(open, ending, now);
  if (closed && record) await ctx.deps.store.updateAttempt(closed);
  else if (closed) await ctx.deps.store.putAttempt(closed);
  await recordDecisionWait(ctx, step, decision.decision);
  const by = decision.by ? ` by ${decision.by}` : '';
  const said = `${decision.decision}${by}`;
  const note = error === undefined ? `${said}: pass` : `${said}: fail ${error.code} ${error.message}`;
  const judged: AttemptRecord = {
    ...(closed ?? open),
    output: candidate.ok ? candidate.output : null,
    confidence: record?.confidence ?? null,
  };
  return report(ctx, flight, { attempt: n, outcome, note, record: judged, decision });
}

/** What a person is shown for a wait: the question, the step's input, its upstream outputs and a review's result. */
export async function presentationOf(
  ctx: Interpreter,
  flight: Pick<InFlight, 'step' | 'planStep'>,
  kind: 'approval' | 'review',
): Promise<{ attempt: number; presentation: ApprovalPresentation }> {
  const { step, planStep } = flight;
  const attempts = (await ctx.deps.store.listAttempts(step.runId, step.stepId))
    .filter((a) => a.generation === step.generation)
    .sort((a, b) => a.attempt - b.attempt);
  const held = kind === 'review' ? attempts.filter((a) => a.output !== undefined).at(-1) : undefined;
  const title = planStep.title ?? step.stepId;
  const upstream = new Map(
    (await ctx.deps.store.getSteps(step.runId, step.upstream)).map((s): [string, StepRecord] => [s.stepId, s]),
  );
  return {
    attempt: held?.attempt ?? Math.max(1, step.attempts),
    presentation: {
      question:
        kind === 'approval'
          ? (planStep.approval?.question ?? `Approve "${title}"?`)
          : `Review the result of "${title}": its confidence is below ${planStep.confidenceThreshold ?? 'the threshold'}`,
      input: attempts[0]?.input ?? null,
      upstreamOutputs: upstreamOutputs(step.upstream, upstream),
      ...(held ? { heldOutput: held.output, heldConfidence: held.confidence ?? null } : {}),
    },
  };
}

/**
 * The machine's AwaitDecision holds `token`: the run's decider is told (with what the person is shown), and records
 * the approval, or answers the token at once (a wait already decided, or one its step no longer has).
 */
export async function requestDecision(
  ctx: Interpreter,
  request: {
    runId: string;
    stepId: string;
    generation: number;
    execution: string;
    kind: 'approval' | 'review';
    taskToken: string;
    brief?: StepBrief | null | undefined;
  },
): Promise<void> {
  const { run, step } = await ctx.loadStep(request.runId, request.stepId);
  const brief = await currentBrief(ctx, run, request.stepId, request.brief);
  const planStep = brief?.step;
  const shown =
    step === undefined || planStep === undefined
      ? { attempt: 1, presentation: { question: `Approve "${request.stepId}"?` } }
      : await presentationOf(ctx, { step, planStep }, request.kind);
  const timeoutSeconds =
    planStep === undefined
      ? ctx.deps.config.runDeadlineSeconds
      : stepApprovalWindow(planStep, ctx.deps.config, { run, brief }, ctx.now()).seconds;
  await ctx.deps.mailbox.send(request.runId, {
    kind: 'AwaitDecision',
    stepId: request.stepId,
    generation: request.generation,
    execution: request.execution,
    approvalKind: request.kind,
    attempt: shown.attempt,
    token: request.taskToken,
    timeoutSeconds,
    presentation: shown.presentation,
  });
}

/** The machine's wait for a decision timed out: the run's decider is told. */
export async function decisionExpired(
  ctx: Interpreter,
  request: { runId: string; stepId: string; generation: number; execution: string; kind: 'approval' | 'review' },
): Promise<void> {
  await ctx.deps.mailbox.send(request.runId, {
    kind: 'DecisionTimedOut',
    stepId: request.stepId,
    generation: request.generation,
    execution: request.execution,
    approvalKind: request.kind,
  });
}

/** The wait a decision ended, counted in the metrics (when there are any). */
async function recordDecisionWait(ctx: Interpreter, step: StepRecord, decision: 'approve' | 'reject' | 'edit') {
  if (!ctx.deps.metrics) return;
  const approvals = (await ctx.deps.store.listRunApprovals(step.runId, { stepId: step.stepId })).filter(
    (a) => a.generation === step.generation && a.status !== 'expired',
  );
  const newest = approvals.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1);
  if (newest) recordApprovalWait(ctx.deps.metrics, newest, newest.decidedAt ?? ctx.now(), decision);
}
