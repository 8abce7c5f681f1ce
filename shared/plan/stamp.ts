/**
 * Validation stamps: one full validation per plan revision on the way from `POST /runs` to StartRun.
 *
 * Whoever validates a plan that the run machine reads again later (the API a submitted plan, the planner the plan it
 * made) stores a stamp beside it on the run: a SHA-256 over what the plan was checked against (the rule set, the
 * catalog, the effective limits) and the plan's own JSON text. ValidatePlan and StartRun compute the stamp again
 * with their own catalog and limits. When it matches, this very plan already passed validateGenerated under the same
 * conditions and a second validation could only repeat that answer, so it is skipped; when it does not (another
 * catalog or other limits, say after a deploy; a plan changed since; no stamp at all), the plan is validated in full
 * as before. A stamp never stands in for a validation that did not happen: it can only be made from a plan and
 * checked against a plan, never copied onto another one.
 */
import { createHash } from 'node:crypto';
import type { Catalog } from './catalog.ts';
import type { Plan } from './schema.ts';
import { effectiveLimits, type PlanLimits, type ValidationResult, validate } from './validate.ts';

/**
 * Names the rules a stamp vouches for: change it when validation starts refusing something it accepted, so that
 * stamps made by the older code (a run planned during a deploy) no longer count.
 */
export const STAMP_RULES = 'cairn-plan-validation/2';

// The catalog part of a stamp, computed once per catalog (a process loads its catalog once).
const catalogDigests = new WeakMap<Catalog, string>();

function catalogDigest(catalog: Catalog): string {
  let digest = catalogDigests.get(catalog);
  if (digest === undefined) {
    digest = createHash('sha256').update(JSON.stringify(catalog.capabilities())).digest('base64url');
    catalogDigests.set(catalog, digest);
  }
  return digest;
}

/**
 * The stamp of a plan that has just passed validateGenerated against `catalog` and `limits`. Only a validator may
 * call this, with the plan it validated, as it will be stored.
 */
export function stampPlan(plan: Plan, catalog: Catalog, limits: Partial<PlanLimits>): string {
  const { maxSteps, maxDepth } = effectiveLimits(limits);
  return createHash('sha256')
    .update(`${STAMP_RULES}\n${catalogDigest(catalog)}\n${maxSteps} ${maxDepth}\n`)
    .update(JSON.stringify(plan))
    .digest('base64url');
}

/** Whether `stamp` proves that `plan`, exactly as given, passed validateGenerated against this catalog and limits. */
export function isStamped(
  stamp: string | undefined,
  plan: unknown,
  catalog: Catalog,
  limits: Partial<PlanLimits>,
): plan is Plan {
  if (stamp === undefined || typeof plan !== 'object' || plan === null || Array.isArray(plan)) return false;
  return stamp === stampPlan(plan as Plan, catalog, limits);
}

/**
 * A run's candidate plan as its revision `revision`: taken as it is when its stamp matches, validated in full
 * (validate) otherwise. The answer is validate's.
 */
export function validateUnlessStamped(
  candidate: unknown,
  stamp: string | undefined,
  catalog: Catalog,
  limits: Partial<PlanLimits>,
  revision: number,
): ValidationResult {
  if (isStamped(stamp, candidate, catalog, limits))
    return { valid: true, plan: { ...candidate, revision }, errors: [] };
  return validate({ ...(candidate as object), revision }, catalog, limits);
}
