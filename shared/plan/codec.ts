/**
 * The wire codec for plan format v1. Decoding is strict (see json.ts for the JSON itself and rules/shape.ts for
 * the fields); it checks the format only. Rules that need the whole plan or the catalog are validate.ts's.
 */
import { messageOf } from './bounded-text.ts';
import type { PlanIssue } from './issues.ts';
import { issue } from './issues.ts';
import { parseStrictJson } from './json.ts';
import { checkShape } from './rules/shape.ts';
import { type Plan, planSchema, planStepSchema } from './schema.ts';

export type DecodeResult = { ok: true; plan: Plan } | { ok: false; errors: PlanIssue[] };

/** Decodes plan JSON: E_JSON (malformed, duplicate key, trailing data), E_SCHEMA_VERSION, E_FIELD. */
export function decodePlan(text: string): DecodeResult {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return { ok: false, errors: [parsed.issue] };
  try {
    const shape = checkShape(parsed.value);
    if (shape.plan !== undefined && shape.issues.length === 0) return { ok: true, plan: shape.plan };
    const errors = shape.issues.length > 0 ? shape.issues.listed() : [issue('E_FIELD', '', 'not a v1 plan')];
    return { ok: false, errors };
  } catch (error) {
    return { ok: false, errors: [issue('E_FIELD', '', `the plan cannot be decoded: ${messageOf(error)}`)] };
  }
}

const PLAN_KEYS = Object.keys(planSchema.shape);
const STEP_KEYS = Object.keys(planStepSchema.shape);

/** Copies a record with the schema's fields first, in schema order, so encoded plans diff well. */
function ordered(record: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (record[key] !== undefined) out[key] = record[key];
  for (const key of Object.keys(record)) if (!(key in out) && record[key] !== undefined) out[key] = record[key];
  return out;
}

/** Encodes a plan as pretty JSON (fields in schema order); decodePlan(encodePlan(p)) deep-equals p. */
export function encodePlan(plan: Plan): string {
  const steps = plan.steps.map((step) => ordered(step, STEP_KEYS));
  return `${JSON.stringify({ ...ordered(plan, PLAN_KEYS), steps }, null, 2)}\n`;
}
