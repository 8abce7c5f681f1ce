/**
 * The run machine's `ValidatePlan` task: payload `{ runId }` → `{ valid, errors }`. The run's candidate plan (its
 * `candidatePlan`, else its `submittedPlan`) is validated as untrusted (validateGenerated) against the catalog and
 * the deployment's limits, unless the run's validation stamp shows that this plan already passed exactly that check
 * (the API or the planner validated it; shared/plan/stamp.ts). Nothing is stored: the run machine routes an invalid plan to RejectPlan with these errors.
 *
 * Environment (read by shared/config/settings.ts): CAIRN_TABLE_NAME (required); CAIRN_CATALOG_FILE or CAIRN_CATALOG,
 * CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH.
 */
import { parsePayload, runTaskPayload } from '../shared/api/lambda-support.ts';
import type { Env } from '../shared/config/settings.ts';
import { NotFoundError } from '../shared/errors.ts';
import { MAX_LISTED_ISSUES } from '../shared/plan/bounded-text.ts';
import type { Catalog } from '../shared/plan/catalog.ts';
import { issue, issueTotal, type PlanIssue } from '../shared/plan/issues.ts';
import { isStamped } from '../shared/plan/stamp.ts';
import { type PlanLimits, validateGenerated } from '../shared/plan/validate.ts';
import type { Store } from '../shared/ports/store.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

/**
 * Step Functions payloads are capped at 256 KB: the first issues tell the story, the rest is counted. The validator
 * lists no more than these, each clipped, then one E_MORE_ISSUES (shared/plan/issues.ts IssueList).
 */
export const MAX_REPORTED_ISSUES = MAX_LISTED_ISSUES;

export interface ValidatorHandlerDeps {
  readonly store: Store;
  readonly catalog: Catalog;
  readonly limits: PlanLimits;
}

export interface ValidationAnswer {
  readonly valid: boolean;
  readonly errors: PlanIssue[];
  /** How many issues there were in all, when more than MAX_REPORTED_ISSUES. */
  readonly totalErrors?: number;
}

function answer(errors: readonly PlanIssue[]): ValidationAnswer {
  const total = issueTotal(errors);
  return total > errors.length
    ? { valid: false, errors: [...errors], totalErrors: total }
    : { valid: false, errors: [...errors] };
}

export function createHandler(deps: ValidatorHandlerDeps) {
  return async (event: unknown): Promise<ValidationAnswer> => {
    const { runId } = parsePayload(runTaskPayload, event);
    const run = await deps.store.getRun(runId);
    if (!run) throw new NotFoundError(`run ${runId} not found`, { context: { runId } });
    // A submitted plan is not copied to `candidatePlan` (PlanRun): it is its own candidate.
    const candidate = run.candidatePlan ?? run.submittedPlan;
    if (candidate === undefined) return answer([issue('E_FIELD', '', 'the run has no candidate plan')]);
    if (isStamped(run.planStamp, candidate, deps.catalog, deps.limits)) return { valid: true, errors: [] };
    const result = validateGenerated(candidate, deps.catalog, deps.limits);
    return result.valid ? { valid: true, errors: [] } : answer(result.errors);
  };
}

/** The root's store, catalog and plan limits, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): ValidatorHandlerDeps {
  const root = lambdaRoot(env);
  return { store: root.store, catalog: root.catalog, limits: root.limits };
}

export const handler = lazyHandler('validator', () => createHandler(defaultDeps()));
