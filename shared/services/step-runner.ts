/**
 * RunStep: the one call the step machine makes per step on the happy path. Claim, capability call, verification,
 * completion and the release of dependents happen in this one invocation; the state machine keeps only what it does
 * well — the backoff wait between attempts and the task-token wait for a person — and RunStep's answer (`StepNext`)
 * says which of them comes next.
 *
 * Every entry is idempotent: the claim is conditional on the execution, an attempt's result is recorded once, a
 * side-effecting call goes through its idempotency record, and completion and release are conditional writes. So a
 * retried invocation (a Lambda throttle, a timeout, a lost answer) picks up where the last one stopped.
 */
import type { HumanDecision } from '../engine/verify.ts';
import type { CapabilityRegistry } from '../ports/capabilities.ts';
import { createContext } from './coordinator-context.ts';
import { approvalTimeoutSeconds, claimStep, completeStep, recordFailure } from './coordinator-step.ts';
import { verifyStep } from './coordinator-approval.ts';
import type { CoordinatorDeps, RunStepRequest, StepNext, StepRef } from './coordinator-types.ts';
import { createStepExecutor, type StepExecutorConfig } from './step-executor.ts';
import type { StepError } from '../plan/schema.ts';

export interface StepRunnerDeps extends CoordinatorDeps {
  readonly registry: CapabilityRegistry;
  readonly executor?: StepExecutorConfig;
}

export interface StepRunner {
  runStep(request: RunStepRequest): Promise<StepNext>;
}

/** What a wait that ended without a usable decision (a stale wait released by cairn) counts as. */
const NO_DECISION: HumanDecision = { decision: 'reject', comment: 'no decision was given', by: 'cairn' };

export function createStepRunner(deps: StepRunnerDeps): StepRunner {
  const ctx = createContext(deps);
  const executor = createStepExecutor({
    store: deps.store,
    catalog: deps.catalog,
    registry: deps.registry,
    clock: deps.clock,
    ...(deps.executor === undefined ? {} : { config: deps.executor }),
  });
  const done = (attempt: number): StepNext => ({ action: 'done', attempt });

  async function timeoutOf(ref: StepRef): Promise<number> {
    const run = await ctx.getRun(ref.runId);
    const loaded = await ctx.plan(run);
    return approvalTimeoutSeconds(loaded.byId.get(ref.stepId), deps.config);
  }

  async function failed(ref: StepRef, attempt: number, error: StepError): Promise<StepNext> {
    const decision = await recordFailure(ctx, { ...ref, attempt, error });
    return decision.decision === 'retry'
      ? { action: 'retry', attempt: decision.attempt, delaySeconds: decision.delaySeconds }
      : done(attempt);
  }

  async function judge(ref: StepRef, attempt: number, decision: HumanDecision | undefined): Promise<StepNext> {
    const verdict = await verifyStep(ctx, { ...ref, attempt, decision });
    if (verdict.verdict === 'pass') {
      await completeStep(ctx, { ...ref, attempt });
      return done(attempt);
    }
    if (verdict.verdict === 'review')
      return { action: 'await', attempt, kind: 'review', timeoutSeconds: await timeoutOf(ref) };
    return failed(ref, attempt, verdict.error ?? { code: 'E_VERIFY', message: 'verification failed', retryable: false });
  }

  async function attempt(ref: StepRef, n: number): Promise<StepNext> {
    const result = await executor.execute({ ...ref, attempt: n });
    if (!result.ok) return failed(ref, n, result.error);
    return judge(ref, n, undefined);
  }

  return {
    async runStep(request) {
      const { runId, stepId, generation, previous } = request;
      const ref: StepRef = { runId, stepId, generation };
      if (previous === null) {
        const claim = await claimStep(ctx, { ...ref, executionId: request.executionId });
        if (claim.outcome !== 'claimed') return done(claim.attempt);
        if (claim.kind === 'human')
          return { action: 'await', attempt: claim.attempt, kind: 'approval', timeoutSeconds: claim.approvalTimeoutSeconds };
        return attempt(ref, claim.attempt);
      }
      if (previous.action === 'retry') return attempt(ref, previous.attempt);
      if (previous.action === 'await') return judge(ref, previous.attempt, request.decision ?? NO_DECISION);
      return done(previous.attempt);
    },
  };
}
