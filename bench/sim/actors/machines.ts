/**
 * The state machines' executions, as they will run against the decider.
 *
 * A step execution: for each attempt, after a seeded while, it succeeds, fails (retryably or for good), or answers
 * with low confidence and waits for a person's review; it tells the run with the attempt number it is on. Before
 * another attempt it waits the backoff (engine/retry.ts, the rule the decider follows) and reads the step's record:
 * it goes on only when the decider said `retrying` for the attempt it just reported, in its generation, under its
 * name (the side-effect gate: nothing acts unless the decider let it). The same gate stands before the first
 * attempt: a step closed before its execution began is not acted on. A gate (a person's step) waits for a decision
 * on a task token; a decision that came after the wait timed out is judged by a new execution the decider starts
 * (`next.action: await`). Now and then an execution fails for good outside its attempt (ExecutionFailed).
 *
 * A compensation execution (`~undo~<stepId>`, `~undo~<stepId>~r<round>` after a person's retry): each attempt
 * undoes the step's effect, fails retryably (another attempt after the backoff it names), or fails for good. An undo
 * that succeeded is recorded: a step's effect is undone at most once.
 *
 * The run machine: the first execution plans the run (or fails to: RejectPlan) and starts it with its plan; every
 * execution (a reopened run gets a new one, `-o<opening>`) then waits on a task token until the run's deadline and
 * tells the run how the wait ended (FinalizeRun): answered (the run finished or paused), or timed out.
 */

import { compensatedStepId } from '../../../shared/engine/compensation.ts';
import { decideRetry, retryPolicy } from '../../../shared/engine/retry.ts';
import type { AttemptEnded, RunCommandInput } from '../../../shared/engine/run/commands.ts';
import { openingOf } from '../../../shared/engine/run/effects.ts';
import type { PlanStep, StepError } from '../../../shared/plan/schema.ts';
import type { SimPlan, StepProfile } from '../plans.ts';
import { type ActorContext, type Execution, streamOf, tell, type WaitEnd } from './platform.ts';

export interface StepInput {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly next?: { readonly action?: string; readonly attempt?: number; readonly kind?: string } | null;
  readonly decision?: Readonly<Record<string, unknown>> | null;
}

interface Ref {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly execution: string;
}

/** How often the gate before a retry reads the step's record before it gives up on hearing from the decider. */
const GATE_READS = 40;

/** The chance that an execution fails for good outside its attempt's own answer (an attempt, or a wait). */
const PLATFORM_FAILURE = 0.01;

export async function runStep(
  ctx: ActorContext,
  exec: Execution,
  input: StepInput,
  planStep: PlanStep,
  profile: StepProfile,
): Promise<void> {
  const ref: Ref = { runId: input.runId, stepId: input.stepId, generation: input.generation, execution: exec.name };
  const rng = streamOf(ctx, `step:${exec.name}`);
  await ctx.sched.sleep(rng.int(5, 200));
  if (exec.stopped) return;
  if (input.next?.action === 'await') {
    // A decision the waiting execution never heard of: this one judges it.
    await judge(ctx, ref, input.next.attempt ?? 1, input.decision ?? { decision: 'reject', by: 'cairn' });
    return;
  }
  if (profile.kind === 'skipped') {
    await say(ctx, ref, 0, { kind: 'skipped', reason: 'its `when` is false' }, 'when: false');
    return;
  }
  if (profile.kind === 'gate') {
    const seconds = planStep.approval?.timeoutSeconds ?? ctx.settings.approvalTimeoutSeconds ?? 600;
    await awaitPerson(ctx, exec, ref, 'approval', 1, seconds, {});
    return;
  }
  const usage = profile.tokens > 0 ? { tokens: profile.tokens, costUsd: profile.tokens / 100_000 } : undefined;
  // The side-effect gate before the first attempt: a step closed since it was started (its stop may have overtaken
  // its start) is not acted on.
  const step = await ctx.store.getStep(ref.runId, ref.stepId);
  if (step?.generation !== ref.generation || step.claimedBy !== exec.name || step.status !== 'running') {
    await say(ctx, ref, 1, { kind: 'notStarted', note: 'the step no longer runs' }, 'not started: the step was closed');
    return;
  }
  for (let n = 1; ; n++) {
    await ctx.sched.sleep(rng.int(profile.minMs, profile.maxMs));
    if (exec.stopped) return;
    if (rng.chance(PLATFORM_FAILURE)) {
      // The Task outlasted the platform's retries: the execution fails for good, its attempt unreported.
      const error = { code: 'States.TaskFailed', message: `attempt ${n}: the Lambda kept failing`, retryable: true };
      ctx.recorder.run(ref.runId)?.attempts.push({ ...ref, attempt: n, outcome: 'failed' });
      await tell(ctx, ref.runId, {
        kind: 'ExecutionFailed',
        stepId: ref.stepId,
        generation: ref.generation,
        attempt: rng.chance(0.5) ? n : null,
        error,
      });
      return;
    }
    const roll = rng.next();
    if (roll >= profile.permanent + profile.retryable) {
      const low = rng.chance(profile.lowConfidence);
      const confidence = profile.kind === 'agent' ? (low ? 0.3 : 0.95) : null;
      const output = { key: planStep.id, attempt: n };
      ctx.recorder.run(ref.runId)?.attempts.push({ ...ref, attempt: n, outcome: low ? 'held' : 'succeeded' });
      if (low) {
        const seconds = ctx.settings.approvalTimeoutSeconds ?? 600;
        await awaitPerson(ctx, exec, ref, 'review', n, seconds, { heldOutput: output, heldConfidence: confidence });
        return;
      }
      if (profile.kind === 'mutate' || profile.kind === 'mutate-bare')
        ctx.recorder.run(ref.runId)?.ledger.push({
          stepId: ref.stepId,
          generation: ref.generation,
          attempt: n,
          at: ctx.sched.iso(),
          entryId: `${exec.name}#${n}`,
        });
      // The execution writes its output on the step; the decider's projection keeps it.
      await ctx.store.transitionStep(
        ref.runId,
        ref.stepId,
        { generation: ref.generation, from: ['running', 'retrying'] },
        { output },
      );
      await say(ctx, ref, n, { kind: 'succeeded', confidence }, `attempt ${n} answered`, usage);
      return;
    }
    const retryable = roll >= profile.permanent;
    const error: StepError = { code: retryable ? 'E_FLAKY' : 'E_BROKEN', message: `attempt ${n} failed`, retryable };
    ctx.recorder.run(ref.runId)?.attempts.push({ ...ref, attempt: n, outcome: 'failed' });
    await say(ctx, ref, n, { kind: 'failed', error }, `attempt ${n} failed: ${error.code}`, usage);
    const next = decideRetry(n, error, retryPolicy(planStep, ctx.settings.retry));
    if (next.decision !== 'retry') return;
    await ctx.sched.sleep(next.delaySeconds * 1000);
    if (exec.stopped || !(await decidedRetry(ctx, exec, ref, n))) return;
  }
}

async function say(
  ctx: ActorContext,
  ref: Ref,
  attempt: number,
  outcome: AttemptEnded['outcome'],
  note: string,
  usage?: AttemptEnded['usage'],
  judged?: AttemptEnded['judged'],
): Promise<void> {
  const command: RunCommandInput = {
    kind: 'AttemptEnded',
    ...ref,
    attempt,
    outcome,
    note,
    ...(usage === undefined ? {} : { usage }),
    ...(judged === undefined ? {} : { judged }),
  };
  await tell(ctx, ref.runId, command);
}

/** Whether the decider let attempt `n + 1` follow: the step's record says so (read until it has heard). */
async function decidedRetry(ctx: ActorContext, exec: Execution, ref: Ref, n: number): Promise<boolean> {
  for (let read = 0; read < GATE_READS && !exec.stopped; read++) {
    const step = await ctx.store.getStep(ref.runId, ref.stepId);
    if (step === undefined || step.generation !== ref.generation || step.claimedBy !== exec.name) return false;
    if (step.status === 'retrying' && step.attempts >= n) return true;
    if (step.status !== 'running' && step.status !== 'retrying') return false;
    await ctx.sched.sleep(1_000 + read * 500);
  }
  return false;
}

/**
 * Waits on a task token for a person (a gate's attempt 1, or a review of attempt `attempt`). Under
 * `lambda.invoke:crash-after` the Task that asked is retried, as Step Functions retries it: with a new token, the
 * old one answering nothing any more.
 */
async function awaitPerson(
  ctx: ActorContext,
  exec: Execution,
  ref: Ref,
  kind: 'approval' | 'review',
  attempt: number,
  seconds: number,
  held: { heldOutput?: unknown; heldConfidence?: number | null },
): Promise<void> {
  let token = `${exec.name}.${kind}.a${attempt}`;
  let waiting: Promise<WaitEnd>;
  for (let retry = 1; ; retry++) {
    exec.token = token;
    waiting = ctx.tokens.wait(token, seconds * 1000);
    // The wait's timeout runs from the Task's start; the Lambda that asks takes a while (the approval's deadline is
    // counted from when the decider takes the ask, a little later).
    await ctx.sched.sleep(streamOf(ctx, `ask:${token}`).int(20, 2_000));
    const presentation = { question: `Decide ${ref.stepId}?`, input: { key: ref.stepId }, ...held };
    await ctx.mailbox.send(ref.runId, {
      kind: 'AwaitDecision',
      ...ref,
      approvalKind: kind,
      attempt,
      token,
      timeoutSeconds: seconds,
      presentation,
    });
    if (retry === 1) ctx.notice(ref.runId, ref.stepId, ref.generation, seconds);
    const fault = retry <= 2 ? ctx.faults.draw('lambda.invoke', ['crash-after']) : undefined;
    if (fault === undefined) break;
    await ctx.sched.sleep(fault.rng.int(200, 3_000));
    if (exec.stopped || !ctx.tokens.retire(token)) break;
    token = `${exec.name}.${kind}.a${attempt}.r${retry}`;
  }
  const failing = streamOf(ctx, `wait:${exec.name}:${attempt}`);
  if (failing.chance(PLATFORM_FAILURE)) {
    // The wait itself fails (not by its timeout) a while in: its token stops answering.
    await ctx.sched.sleep(failing.int(1_000, seconds * 1000));
    if (exec.stopped || !ctx.tokens.retire(token)) return judgeEnd(ctx, exec, ref, kind, attempt, await waiting);
    exec.token = undefined;
    const error = { code: 'States.TaskFailed', message: 'the wait for a decision failed', retryable: false };
    await tell(ctx, ref.runId, {
      kind: 'ExecutionFailed',
      stepId: ref.stepId,
      generation: ref.generation,
      attempt,
      error,
    });
    return;
  }
  await judgeEnd(ctx, exec, ref, kind, attempt, await waiting);
}

/** What follows the end of a wait for a person: its timeout told, or the step judged by the answer. */
async function judgeEnd(
  ctx: ActorContext,
  exec: Execution,
  ref: Ref,
  kind: 'approval' | 'review',
  attempt: number,
  end: WaitEnd,
): Promise<void> {
  exec.token = undefined;
  if (end.kind === 'stopped' || exec.stopped) return;
  if (end.kind === 'timedOut') {
    // The machine's Catch runs a Task to report it: a Lambda's while, in which a decision may still be taken.
    await ctx.sched.sleep(streamOf(ctx, `timeout:${exec.name}:${attempt}`).int(50, 3_000));
    await tell(ctx, ref.runId, { kind: 'DecisionTimedOut', ...ref, approvalKind: kind });
    return;
  }
  await judge(ctx, ref, attempt, end.output);
}

/** The step's attempt judged by a person's decision: approved or edited, it succeeds; rejected, it fails. */
async function judge(ctx: ActorContext, ref: Ref, attempt: number, reply: Readonly<Record<string, unknown>>) {
  const decision = reply.decision === 'approve' || reply.decision === 'edit' ? reply.decision : 'reject';
  const by = typeof reply.by === 'string' ? reply.by : undefined;
  const judged = { decision, ...(by === undefined ? {} : { by }) } as const;
  if (decision === 'reject') {
    const error: StepError = { code: 'E_REJECTED', message: `rejected by ${by ?? 'someone'}`, retryable: false };
    await say(ctx, ref, attempt, { kind: 'failed', error }, `judged: ${decision}`, undefined, judged);
    return;
  }
  await say(ctx, ref, attempt, { kind: 'succeeded', confidence: null }, `judged: ${decision}`, undefined, judged);
}

/** Attempts a compensation makes before it fails for good. */
const ATTEMPTS = 3;

export async function runCompensation(
  ctx: ActorContext,
  exec: Execution,
  input: { readonly runId: string; readonly stepId: string; readonly generation: number },
): Promise<void> {
  const rng = streamOf(ctx, `undo:${exec.name}`);
  // `~undo~<stepId>~r<round>`: the round follows the step id's own `~` (a step id never holds one).
  const round = Number(/^~undo~[^~]+~r(\d+)$/.exec(input.stepId)?.[1] ?? 0);
  const ref = { stepId: input.stepId, generation: input.generation, execution: exec.name, round };
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    await ctx.sched.sleep(rng.int(50, 3_000));
    if (exec.stopped) return;
    const roll = rng.next();
    if (roll < 0.65) {
      ctx.recorder.run(input.runId)?.undos.push({
        stepId: compensatedStepId(input.stepId),
        generation: input.generation,
        round,
        execution: exec.name,
      });
      await tell(ctx, input.runId, { kind: 'CompensationEnded', ...ref, attempt, outcome: { kind: 'compensated' } });
      return;
    }
    const error = { code: 'E_UNDO', message: `undo attempt ${attempt} failed`, retryable: roll < 0.85 };
    if (!error.retryable || attempt === ATTEMPTS) {
      await tell(ctx, input.runId, { kind: 'CompensationEnded', ...ref, attempt, outcome: { kind: 'failed', error } });
      return;
    }
    const delaySeconds = rng.int(1, 10);
    await tell(ctx, input.runId, {
      kind: 'CompensationEnded',
      ...ref,
      attempt,
      outcome: { kind: 'retry', error, delaySeconds },
    });
    await ctx.sched.sleep(delaySeconds * 1000);
  }
}

export async function runMachine(
  ctx: ActorContext,
  exec: Execution,
  input: { readonly runId: string; readonly resume?: boolean },
  sim: SimPlan,
): Promise<void> {
  const { runId } = input;
  const rng = streamOf(ctx, `run:${exec.name}`);
  const opening = openingOf(runId, exec.name);
  if (opening < 0) throw new Error(`run machine ${exec.name} names no opening of ${runId}`);
  if (input.resume !== true) {
    // Planning and validation.
    await ctx.sched.sleep(rng.int(100, 2_000));
    if (sim.rejectPlan) {
      await tell(ctx, runId, {
        kind: 'RejectPlan',
        reason: 'planning_failed',
        evidence: { error: { message: 'the planner gave up' } },
        opening,
      });
      return;
    }
    await tell(ctx, runId, { kind: 'StartRun', plan: sim.plan });
  }
  const token = `${exec.name}.wait`;
  exec.token = token;
  const waiting = ctx.tokens.wait(token, ctx.settings.runDeadlineSeconds * 1000);
  await tell(ctx, runId, { kind: 'AwaitRun', token, opening });
  const end = await waiting;
  exec.token = undefined;
  if (end.kind === 'stopped') return;
  await tell(ctx, runId, { kind: 'FinalizeRun', opening, timedOut: end.kind === 'timedOut' });
}
