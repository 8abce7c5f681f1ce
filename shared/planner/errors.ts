/**
 * The planner's stable error codes. Each PlannerError carries one in `context.code`, so the API, the CLI and the
 * run state machine can tell a bad request from an unusable model answer without parsing messages.
 */

import { clipText } from '../engine/replan/step-definition.ts';
import { isModelError, isPlannerError, PlannerError } from '../errors.ts';

export const PLANNER_ERROR_CODES = [
  /** Mode and directTarget do not fit together (DIRECT without a target, DECOMPOSE with one, unknown mode). */
  'E_MODE',
  /** The directTarget is not in the catalog. */
  'E_UNKNOWN_TARGET',
  /** The objective is blank, too long or not a string. */
  'E_OBJECTIVE',
  /** A DIRECT input that breaks the target's input contract. */
  'E_INPUT',
  /** The model's plan failed validateGenerated; `context.issues` lists every problem. */
  'E_INVALID_PLAN',
  /** The HTN library has no method that decomposes the objective with this catalog and these limits. */
  'E_NO_METHOD',
  /** A method of the HTN library is malformed (a bug in the library, not in the request). */
  'E_METHOD',
  /** The model answered with nothing usable. */
  'E_MODEL_EMPTY',
  /** The model answered in text instead of calling the plan tool. */
  'E_MODEL_TEXT_ONLY',
  /** The model called a tool other than the plan tool. */
  'E_MODEL_WRONG_TOOL',
  /** The model proposed several plans at once. */
  'E_MODEL_SEVERAL_CANDIDATES',
  /** The answer was cut off at the token limit, so the plan is incomplete. */
  'E_MODEL_TRUNCATED',
  /** The provider's guardrails or content filters stopped the answer. */
  'E_MODEL_REFUSED',
  /** The provider reports the model's output or tool call as malformed. */
  'E_MODEL_MALFORMED',
  /** A replan request without a previous plan, a diagnosis, or with a failed step the plan does not have. */
  'E_REPLAN_REQUEST',
  /** The HTN planner found no untried alternative target and no other method for the failed step. */
  'E_NO_ALTERNATIVE',
  /** A replan broke the scope rule (a frozen or finished step changed or dropped); `context.issues` lists why. */
  'E_REPLAN_REJECTED',
  /** A person's replan whose revision would change nothing (the HTN planner reads no free text). */
  'E_NO_CHANGE',
] as const;
export type PlannerErrorCode = (typeof PLANNER_ERROR_CODES)[number];

/** Code used in ModelError contexts for a failed provider call (the SDK error is the `cause`). */
export const MODEL_PROVIDER_ERROR = 'E_MODEL_PROVIDER';

export const plannerError = (
  code: PlannerErrorCode,
  message: string,
  context: Readonly<Record<string, unknown>> = {},
): PlannerError => new PlannerError(message, { context: { ...context, code } });

/** The stable code of a PlannerError, or undefined for any other value. */
export function plannerErrorCode(error: unknown): PlannerErrorCode | undefined {
  if (!isPlannerError(error)) return undefined;
  const code = error.context.code;
  return typeof code === 'string' && (PLANNER_ERROR_CODES as readonly string[]).includes(code)
    ? (code as PlannerErrorCode)
    : undefined;
}

/** Characters of a planner's reason kept in a decline (it ends up in the terminal evidence). */
const DECLINE_MESSAGE_CHARS = 1000;

/** A planner or model failure as the code and message a replan's decline records. */
export function describeReplanError(error: unknown): { code: string; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = isPlannerError(error)
    ? (plannerErrorCode(error) ?? 'E_PLANNER')
    : isModelError(error)
      ? 'E_MODEL'
      : 'E_REPLAN_FAILED';
  return { code, message: clipText(message, DECLINE_MESSAGE_CHARS) };
}
