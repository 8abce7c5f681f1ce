/**
 * The coordinator Lambda: every coordinator task of the run and step state machines sends `{ action, ...ids }`;
 * the payload is parsed (a zod union on `action`) and dispatched to the coordinator service. A bad payload is a
 * ValidationError, a name the state machines' Catch can route.
 *
 * Environment (read by shared/config/settings.ts; defaults in shared/config/defaults.ts): CAIRN_TABLE_NAME,
 * CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN (required); CAIRN_CATALOG_FILE or CAIRN_CATALOG (default: the bundled
 * demo catalog), CAIRN_RUN_DEADLINE_SECONDS, CAIRN_RETRY_BASE_SECONDS, CAIRN_RETRY_CAP_SECONDS, CAIRN_MAX_STEPS,
 * CAIRN_MAX_DEPTH, CAIRN_TRACE_RETENTION (`last` or `full`), CAIRN_MAX_REPLANS (0 turns replanning off).
 */
import { z } from 'zod';
import type { Env } from '../shared/config/settings.ts';
import { briefPayloadFields, sentBrief } from '../shared/engine/run/step-brief.ts';
import { ValidationError } from '../shared/errors.ts';
import type { Coordinator } from '../shared/services/coordinator.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

const id = z.string().min(1);
const stepRef = { runId: id, stepId: id, generation: z.number().int().min(0) };
const attempt = z.number().int().min(1);
const stepError = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().optional(),
  details: z.json().optional(),
});
/** Step Functions passes `null` for what JSONPath cannot leave out. */
const optional = <S extends z.ZodType>(schema: S) => schema.nullish();

/** A person's answer to a gate or review, as the approval API sends it through the task token. */
export const humanDecisionSchema = z.object({
  decision: z.enum(['approve', 'reject', 'edit']),
  output: z.json().optional(),
  comment: optional(z.string()),
  by: optional(z.string()),
});

/** The execution a machine's word comes from (`$$.Execution.Name`): a run's opening, a step generation's holder. */
const execution = optional(z.string());

export const coordinatorPayloadSchema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('rejectPlan'),
    runId: id,
    errors: z.array(z.object({ code: z.string(), path: z.string(), message: z.string() })),
    execution,
  }),
  z.object({ action: z.literal('failRun'), runId: id, error: z.unknown(), execution }),
  z.object({ action: z.literal('startRun'), runId: id }),
  z.object({ action: z.literal('awaitRun'), runId: id, taskToken: id, execution }),
  z.object({
    action: z.literal('finalizeRun'),
    runId: id,
    timedOut: optional(z.unknown()),
    error: optional(z.unknown()),
    execution: optional(z.string()),
  }),
  z.object({
    action: z.literal('recordFailure'),
    ...stepRef,
    attempt: optional(attempt),
    error: stepError,
    /** RunStep's entry (its `previous`): null for the first; absent from an execution started before it was sent. */
    previous: z
      .object({ attempt: z.number().int().min(0) })
      .passthrough()
      .nullish(),
    execution,
    ...briefPayloadFields,
  }),
  z.object({
    action: z.literal('requestApproval'),
    ...stepRef,
    kind: z.enum(['approval', 'review', 'revision', 'replan']),
    taskToken: id,
    execution,
    ...briefPayloadFields,
  }),
  z.object({
    action: z.literal('expireApproval'),
    ...stepRef,
    kind: optional(z.enum(['approval', 'review', 'revision', 'replan'])),
    execution,
  }),
]);
export type CoordinatorPayload = z.infer<typeof coordinatorPayloadSchema>;

export interface CoordinatorHandlerDeps {
  readonly coordinator: Coordinator;
}

const orUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

function parse(event: unknown): CoordinatorPayload {
  const parsed = coordinatorPayloadSchema.safeParse(event);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((i) => ({
    code: 'E_PAYLOAD',
    path: i.path.map((p) => `/${String(p)}`).join(''),
    message: i.message,
  }));
  throw new ValidationError(
    `coordinator payload is invalid: ${errors.map((e) => `${e.path || '(root)'} ${e.message}`).join('; ')}`,
    errors,
  );
}

export function createHandler(deps: CoordinatorHandlerDeps) {
  const { coordinator } = deps;
  return async (event: unknown): Promise<unknown> => {
    const payload = parse(event);
    switch (payload.action) {
      case 'rejectPlan':
        await coordinator.rejectPlan(payload);
        return {};
      case 'failRun':
        await coordinator.failRun(payload);
        return {};
      case 'startRun':
        return coordinator.startRun(payload);
      case 'awaitRun':
        await coordinator.awaitRun(payload);
        return {};
      case 'finalizeRun':
        await coordinator.finalizeRun(payload);
        return {};
      case 'recordFailure':
        return coordinator.recordFailure({
          ...payload,
          attempt: orUndefined(payload.attempt),
          brief: sentBrief(payload),
        });
      case 'requestApproval':
        await coordinator.requestApproval({ ...payload, brief: sentBrief(payload) });
        return {};
      case 'expireApproval':
        await coordinator.expireApproval({ ...payload, kind: orUndefined(payload.kind) });
        return {};
    }
  };
}

/** The coordinator of the container's root, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): CoordinatorHandlerDeps {
  return { coordinator: lambdaRoot(env).coordinator };
}

export const handler = lazyHandler('coordinator', () => createHandler(defaultDeps()));
