/**
 * Schemas every part of the contract uses: the coded error body (errors.ts makes it), an invalid plan's answer
 * (plan-check.ts), the ids in paths (path-ids.ts checks them) and the headers some routes read.
 */
import { z } from 'zod';
import { RUN_STATUSES, STEP_STATUSES } from '../../../plan/schema.ts';
import { MAX_PATH_ID_LENGTH, PATH_ID_PATTERN } from '../../path-ids.ts';
import { described, named } from '../registry.ts';

export const ErrorBody = named(
  'Error',
  z.object({
    error: z.object({
      code: described('Stable and machine-readable: E_NOT_FOUND, E_BAD_REQUEST, E_CONFLICT...', z.string()),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  }),
  {
    description: 'Every refusal: a stable code, a message about the request, and details (issues, reasons) if any.',
    examples: [{ error: { code: 'E_NOT_FOUND', message: 'run 0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1 not found' } }],
  },
);

export const PlanIssue = named(
  'PlanIssue',
  z.object({
    code: z.string(),
    path: described("A JSON Pointer into the plan ('' is the plan itself).", z.string()),
    message: z.string(),
  }),
);

export const InvalidPlan = named(
  'InvalidPlan',
  z.object({
    error: ErrorBody.shape.error,
    valid: z.literal(false),
    errors: z.array(PlanIssue),
  }),
  { description: 'A plan that is not fit to run: E_INVALID_PLAN, with every issue.' },
);

export const RunStatus = named('RunStatus', z.enum(RUN_STATUSES));
export const StepStatus = named('StepStatus', z.enum(STEP_STATUSES));

export const pathId = z.string().min(1).max(MAX_PATH_ID_LENGTH).regex(PATH_ID_PATTERN);

export const runParams = z.object({ runId: pathId });
export const stepParams = z.object({ runId: pathId, stepId: pathId });
export const commandParams = z.object({ runId: pathId, commandId: pathId });
export const approvalParams = z.object({ id: pathId });

/** `Idempotency-Key`: the same key answers the first request's result instead of doing it again. */
export const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/)
    .optional(),
});

export const cursorPage = { nextCursor: z.string().optional() };
