/**
 * Plan validation: everything the executor trusts about a plan is checked here, and every problem is reported
 * (not only the first), each with a stable code and a JSON Pointer: the first 100 found, listed in step order, then
 * one E_MORE_ISSUES counting the rest, which are counted and not kept (issues.ts IssueList). Never throws: any
 * input, of any shape, comes back as a ValidationResult. Linear in steps + edges, with one exception: expressions
 * that read a step that is neither a direct dependency nor inside a group depended on are traced together, at
 * (steps + edges) × (distinct such steps) / 32 word operations (rules/upstream.ts).
 *
 * - rules/shape.ts: the document and each step against the zod schema (E_FIELD, E_SCHEMA_VERSION); the common,
 *   well-formed step takes rules/fast-shape.ts instead of zod; before it, rules/watches.ts counts the steps'
 *   `watches` (E_LIMIT) without reading them
 * - rules/structure.ts: ids, dependencies, groups, cycles, depth (graph.ts does the graph work)
 * - rules/steps.ts: catalog targets and contracts, approvals, rollback hints, lifecycle fields
 * - rules/criteria.ts: checkpoints (machine-checkable criteria on mutating steps and gates, expected failures)
 * - rules/references.ts: JSONata expressions and the steps they read (rules/upstream.ts answers "upstream?")
 * - rules/budget.ts: budgets on the plan and its steps (E_BUDGET)
 * - rules/metadata.ts: the size of a step's metadata (E_METADATA_TOO_LARGE)
 */
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import { messageOf } from './bounded-text.ts';
import type { Catalog } from './catalog.ts';
import { IssueList, issue, type PlanIssue } from './issues.ts';
import { parseStrictJson } from './json.ts';
import { checkBudgets } from './rules/budget.ts';
import { checkCriteria } from './rules/criteria.ts';
import { checkMetadata } from './rules/metadata.ts';
import { checkExpressions } from './rules/references.ts';
import { checkShape } from './rules/shape.ts';
import { checkSteps } from './rules/steps.ts';
import { checkDepth, checkStructure } from './rules/structure.ts';
import type { Plan } from './schema.ts';

export interface PlanLimits {
  maxSteps: number;
  maxDepth: number;
}

/** The contract's default limits; their owner is shared/config/defaults.ts. */
export { DEFAULT_LIMITS };

export type ValidationResult = { valid: true; plan: Plan; errors: [] } | { valid: false; errors: PlanIssue[] };

export interface ValidateOptions {
  /** Treat the plan as untrusted (model output, an API client): no lifecycle data beyond "pending". */
  generated?: boolean;
}

const positiveOr = (value: number | undefined, fallback: number): number =>
  typeof value === 'number' && !Number.isNaN(value) && value >= 0 ? value : fallback;

/** The limits a validation applies: each given one that is a number ≥ 0, else the default. */
export const effectiveLimits = (limits: Partial<PlanLimits>): PlanLimits => ({
  maxSteps: positiveOr(limits.maxSteps, DEFAULT_LIMITS.maxSteps),
  maxDepth: positiveOr(limits.maxDepth, DEFAULT_LIMITS.maxDepth),
});

const STEP_PATH = /^\/steps\/(\d+)(?:\/|$)/;

/** Plan-level errors first, then each step's, in step order; the rules' order is kept within a step (stable). */
function byStep(errors: PlanIssue[]): PlanIssue[] {
  const stepOf = (e: PlanIssue): number => {
    const match = STEP_PATH.exec(e.path);
    return match ? Number(match[1]) : -1;
  };
  return errors
    .map((error, order) => ({ error, order, step: stepOf(error) }))
    .sort((a, b) => a.step - b.step || a.order - b.order)
    .map((entry) => entry.error);
}

function run(value: unknown, catalog: Catalog, limits: Partial<PlanLimits>, generated: boolean): ValidationResult {
  const { maxSteps, maxDepth } = effectiveLimits(limits);
  const shape = checkShape(value);
  const errors = shape.issues;
  if (!shape.checkable) return { valid: false, errors: errors.listed() };
  const steps = shape.steps;
  const stepCount = Array.isArray((value as { steps?: unknown }).steps)
    ? (value as { steps: unknown[] }).steps.length
    : 0;
  const tooMany = stepCount > maxSteps;
  if (tooMany) errors.push(issue('E_TOO_MANY_STEPS', '/steps', `${stepCount} steps exceed the limit of ${maxSteps}`));

  const structure = checkStructure(steps, errors);
  checkDepth(structure, maxDepth, errors);
  checkSteps(steps, catalog, { generated }, errors);
  checkCriteria(steps, catalog, errors);
  checkBudgets(value, steps, errors);
  checkMetadata(steps, errors);
  // Past the step limit, only the checks that stay linear run: reads of distant steps are not traced.
  checkExpressions(steps, structure, { checkDistant: !tooMany }, errors);

  if (errors.length > 0 || shape.plan === undefined) {
    if (errors.length === 0) errors.push(issue('E_FIELD', '', 'the plan does not match plan format v1'));
    return { valid: false, errors: errors.listed(byStep) };
  }
  return { valid: true, plan: shape.plan, errors: [] };
}

function guarded(value: unknown, catalog: Catalog, limits: Partial<PlanLimits>, generated: boolean): ValidationResult {
  try {
    return run(value, catalog, limits, generated);
  } catch (error) {
    // Only values that are not JSON get here (cyclic objects, nesting deep enough to exhaust the stack).
    const found = new IssueList();
    found.push(issue('E_FIELD', '', `the plan cannot be checked: ${messageOf(error)}`));
    return { valid: false, errors: found.listed() };
  }
}

/** Checks a plan value (already parsed) against plan format v1, the catalog and the limits. */
export function validate(plan: unknown, catalog: Catalog, limits: Partial<PlanLimits> = {}): ValidationResult {
  return guarded(plan, catalog, limits, false);
}

/** validate, plus the rules for untrusted plans: status "pending" or absent, result and error null or absent. */
export function validateGenerated(plan: unknown, catalog: Catalog, limits: Partial<PlanLimits> = {}): ValidationResult {
  return guarded(plan, catalog, limits, true);
}

/** Parses plan JSON strictly (E_JSON) and validates it. */
export function validateText(
  text: string,
  catalog: Catalog,
  limits: Partial<PlanLimits> = {},
  options: ValidateOptions = {},
): ValidationResult {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    const found = new IssueList();
    found.push(parsed.issue);
    return { valid: false, errors: found.listed() };
  }
  return guarded(parsed.value, catalog, limits, options.generated === true);
}
