/**
 * A planner's reasoning as it travels with a plan (`rationale`): what a model said about its plan, or the HTN
 * methods chosen and the conditions that selected them. A model's word is untrusted and optional, so it is bounded
 * and tolerated rather than validated: any string is clipped to the schema's bound, and anything else (absent, not a
 * string, blank) is dropped, so a rationale never makes a plan invalid.
 */
import { MAX_RATIONALE_LENGTH } from '../plan/schema.ts';
import { clip } from './htn/text.ts';
import type { MethodChoice } from './htn/types.ts';

/** The rationale a plan may keep: a non-blank string, whitespace collapsed, at most MAX_RATIONALE_LENGTH long. */
export function boundRationale(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = clip(value, MAX_RATIONALE_LENGTH);
  return text.length === 0 ? undefined : text;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A model's candidate with its `rationale` bounded (or left out): everything else is left for the validator. */
export function withBoundedRationale(candidate: unknown): unknown {
  if (!isRecord(candidate) || !Object.hasOwn(candidate, 'rationale')) return candidate;
  const { rationale, ...rest } = candidate;
  const bounded = boundRationale(rationale);
  return bounded === undefined ? rest : { ...rest, rationale: bounded };
}

/** Where a method choice sits, for a reader: the objective (the root task), or a task at its step id. */
const where = (choice: MethodChoice): string => (choice.path === '' ? 'objective' : `${choice.path} (${choice.task})`);

/** One method choice as a reader sees it: where, which method, and why that one. */
export const describeChoice = (choice: MethodChoice): string =>
  `${where(choice)}: method ${choice.method}${choice.why ? `, because ${choice.why}` : ''}`;

/** The HTN planner's rationale: every method choice, in expansion order. */
export function htnRationale(choices: readonly MethodChoice[]): string | undefined {
  if (choices.length === 0) return undefined;
  return boundRationale(`HTN: ${choices.map(describeChoice).join('; ')}.`);
}
