/**
 * The step-executor Lambda: the step machine's RunStep task. `{ runId, stepId, generation, executionId, previous,
 * decision }` in, `StepNext` out (done, retry after a backoff, or wait for a person). It claims the step, calls its
 * capability, verifies the result and completes it, releasing dependents, in this one invocation (see
 * shared/services/step/run-step.ts). Capability failures come back as data (a retry or a final failure); only
 * infrastructure failures throw (the state machine retries service errors, then records the attempt as failed).
 *
 * Environment (read by shared/config/settings.ts): everything the coordinator reads (CAIRN_TABLE_NAME,
 * CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN, ...: see functions/coordinator.ts), plus CAIRN_BINDINGS (target →
 * binding JSON, see shared/capabilities/registry.ts; built by shared/adapters/bindings.ts), CAIRN_BUILTINS (builtin
 * packs, `demo,conformance` or `none`; default `demo`, so the demo catalog runs on a fresh deploy; configured
 * bindings win), CAIRN_MAX_OUTPUT_BYTES, CAIRN_IDEMPOTENCY_TTL_SECONDS.
 */
import { z } from 'zod';
import type { Env } from '../shared/config/settings.ts';
import { briefPayloadFields, sentBrief } from '../shared/engine/run/step-brief.ts';
import { ValidationError } from '../shared/errors.ts';
import type { StepNext } from '../shared/services/coordinator-types.ts';
import type { StepRunner } from '../shared/services/step/run-step.ts';
import { humanDecisionSchema } from './coordinator.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

/** Step Functions passes `null` for what JSONPath cannot leave out. */
const stepNextSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('done'), attempt: z.number().int().min(0) }),
  z.object({ action: z.literal('retry'), attempt: z.number().int().min(1), delaySeconds: z.number().min(0) }),
  z.object({
    action: z.literal('await'),
    attempt: z.number().int().min(0),
    kind: z.enum(['approval', 'review', 'revision', 'replan']),
    timeoutSeconds: z.number().int().min(1),
  }),
]);

export const runStepPayloadSchema = z.object({
  runId: z.string().min(1),
  stepId: z.string().min(1),
  generation: z.number().int().min(0),
  executionId: z.string().min(1),
  previous: stepNextSchema.nullable(),
  decision: humanDecisionSchema.nullish(),
  /** What the step needs of its plan (engine/run/step-brief.ts); absent from an execution started before briefs. */
  ...briefPayloadFields,
});
export type RunStepPayload = z.infer<typeof runStepPayloadSchema>;

export interface StepExecutorHandlerDeps {
  readonly runner: StepRunner;
}

export function createHandler(deps: StepExecutorHandlerDeps) {
  return async (event: unknown): Promise<StepNext> => {
    const parsed = runStepPayloadSchema.safeParse(event);
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({
        code: 'E_PAYLOAD',
        path: i.path.map((p) => `/${String(p)}`).join(''),
        message: i.message,
      }));
      throw new ValidationError(
        `step-executor payload is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        errors,
      );
    }
    const { decision, started: _started, ...request } = parsed.data;
    return deps.runner.runStep({
      ...request,
      brief: sentBrief(parsed.data),
      decision: decision && {
        decision: decision.decision,
        ...(decision.output === undefined ? {} : { output: decision.output }),
        comment: decision.comment ?? undefined,
        by: decision.by ?? undefined,
      },
    });
  };
}

/** The root's step runner, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): StepExecutorHandlerDeps {
  return { runner: lambdaRoot(env).runner };
}

export const handler = lazyHandler('step-executor', () => createHandler(defaultDeps()));
