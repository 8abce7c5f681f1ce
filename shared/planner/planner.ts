/**
 * The planner: turns an objective into a validated revision-1 plan. The caller picks the mode, never the model:
 *
 * - DIRECT (a directTarget is given): one step for that target, straight from the catalog, no model call;
 * - DECOMPOSE (no directTarget): the model port proposes a plan, which is validated as untrusted input. An invalid
 *   plan is a PlannerError carrying every issue; nothing the model said is ever used unvalidated.
 */

import { clipMessage, joinIssues, MAX_MESSAGE_CHARS } from '../plan/bounded-text.ts';
import type { Catalog } from '../plan/catalog.ts';
import { containsExpression } from '../plan/expressions.ts';
import { issueTotal, type PlanIssue } from '../plan/issues.ts';
import { MAX_OBJECTIVE_LENGTH, type Plan, planJsonSchema } from '../plan/schema.ts';
import { stampPlan } from '../plan/stamp.ts';
import { DEFAULT_LIMITS, type PlanLimits, validateGenerated } from '../plan/validate.ts';
import type { PlanModel } from '../ports/plan-model.ts';
import { buildDirectPlan } from './direct.ts';
import { plannerError } from './errors.ts';
import { withBoundedRationale } from './rationale.ts';

export const PLANNER_MODES = ['DIRECT', 'DECOMPOSE'] as const;
export type PlannerMode = (typeof PLANNER_MODES)[number];

export interface PlanRequest {
  readonly objective: string;
  /** Default: DIRECT when a directTarget is given, DECOMPOSE otherwise. */
  readonly mode?: PlannerMode;
  /** DIRECT only: the catalog target of the single step. */
  readonly directTarget?: string;
  /** DIRECT only: the step's input (a JSON value; `{% … %}` expressions allowed). */
  readonly input?: unknown;
}

export interface PlannerDeps {
  readonly model: PlanModel;
  readonly catalog: Catalog;
  readonly limits?: Partial<PlanLimits>;
}

export interface Planner {
  readonly limits: PlanLimits;
  plan(request: PlanRequest): Promise<Plan>;
  /**
   * The validation stamp (shared/plan/stamp.ts) of a plan this planner returned: it passed validateGenerated
   * against the planner's catalog and limits. Made when the plan was validated, so it matches the plan only as it
   * was then. Undefined for any other value.
   */
  stamp(plan: Plan): string | undefined;
}

export type ResolvedMode = { readonly mode: 'DIRECT'; readonly target: string } | { readonly mode: 'DECOMPOSE' };

const ISSUES_IN_MESSAGE = 5;

function checkObjective(objective: unknown): asserts objective is string {
  if (typeof objective !== 'string' || objective.trim().length === 0)
    throw plannerError('E_OBJECTIVE', 'the objective must be a non-blank string');
  if (objective.length > MAX_OBJECTIVE_LENGTH)
    throw plannerError('E_OBJECTIVE', `the objective is longer than ${MAX_OBJECTIVE_LENGTH} characters`, {
      length: objective.length,
    });
}

/** Checks that mode, directTarget and input fit together and that a DIRECT target is registered. */
export function resolveMode(request: PlanRequest, catalog: Catalog): ResolvedMode {
  const { mode, directTarget } = request;
  if (mode !== undefined && !(PLANNER_MODES as readonly unknown[]).includes(mode))
    throw plannerError('E_MODE', `unknown mode ${JSON.stringify(mode)}: use DIRECT or DECOMPOSE`, { mode });
  if (directTarget !== undefined && (typeof directTarget !== 'string' || directTarget.length === 0))
    throw plannerError('E_MODE', 'directTarget must be a non-empty catalog target', { mode });
  const resolved = mode ?? (directTarget === undefined ? 'DECOMPOSE' : 'DIRECT');
  if (resolved === 'DECOMPOSE') {
    if (directTarget !== undefined)
      throw plannerError('E_MODE', 'DECOMPOSE takes no directTarget: the model chooses the targets', {
        mode: resolved,
        directTarget,
      });
    if (request.input !== undefined)
      throw plannerError('E_MODE', 'an input can only be given in DIRECT mode', { mode: resolved });
    return { mode: resolved };
  }
  if (directTarget === undefined)
    throw plannerError('E_MODE', 'DIRECT mode needs a directTarget: the catalog target to run', { mode: resolved });
  if (!catalog.has(directTarget))
    throw plannerError('E_UNKNOWN_TARGET', `directTarget ${directTarget} is not in the catalog`, { directTarget });
  return { mode: 'DIRECT', target: directTarget };
}

const LISTED_CHARS = MAX_MESSAGE_CHARS - 300;

/** The PlannerError (E_INVALID_PLAN) for a candidate that failed validation, with the first issues in its message. */
export const invalidPlan = (source: string, issues: readonly PlanIssue[]) => {
  const total = issueTotal(issues);
  const shown = issues
    .filter((i) => i.code !== 'E_MORE_ISSUES')
    .slice(0, ISSUES_IN_MESSAGE)
    .map((i) => `${i.code} at ${i.path || '(plan)'}: ${i.message}`);
  const more = total > shown.length ? `; and ${total - shown.length} more` : '';
  return plannerError(
    'E_INVALID_PLAN',
    // The list is cut short of the limit, so the count of the rest survives the message's own bound.
    clipMessage(
      `the plan from ${source} is invalid (${total} issue${total === 1 ? '' : 's'}): ${joinIssues(shown, '; ', LISTED_CHARS)}${more}`,
    ),
    { source, issues },
  );
};

/**
 * The application owns revision and objective: a model's plan gets them set before it is validated. Its rationale
 * is bounded (clipped, or dropped when it is not a string): the model's reasoning never makes a plan invalid.
 */
const withOwnedFields = (candidate: unknown, objective: string): unknown =>
  typeof candidate === 'object' && candidate !== null && !Array.isArray(candidate)
    ? withBoundedRationale({ ...candidate, revision: 1, objective })
    : candidate;

export function createPlanner(deps: PlannerDeps): Planner {
  const { model, catalog } = deps;
  const limits: PlanLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  // The stamps of the plans this planner validated and returned: only those have one.
  const stamps = new WeakMap<Plan, string>();

  const accept = (candidate: unknown, source: string): Plan => {
    const result = validateGenerated(candidate, catalog, limits);
    if (!result.valid) throw invalidPlan(source, result.errors);
    stamps.set(result.plan, stampPlan(result.plan, catalog, limits));
    return result.plan;
  };

  return {
    limits,
    stamp: (plan) => stamps.get(plan),
    async plan(request) {
      checkObjective(request.objective);
      const resolved = resolveMode(request, catalog);
      if (resolved.mode === 'DIRECT') {
        const capability = catalog.get(resolved.target);
        if (!capability)
          throw plannerError('E_UNKNOWN_TARGET', `directTarget ${resolved.target} is not in the catalog`);
        if (request.input !== undefined && !containsExpression(request.input)) {
          const check = catalog.validateInput(resolved.target, request.input);
          if (!check.ok)
            throw plannerError(
              'E_INPUT',
              `the input breaks the contract of ${resolved.target}: ${joinIssues(check.errors)}`,
              {
                directTarget: resolved.target,
                errors: check.errors,
              },
            );
        }
        return accept(buildDirectPlan(request.objective, capability, request.input), 'DIRECT mode');
      }
      const candidate = await model.proposePlan({
        objective: request.objective,
        catalog: catalog.capabilities(),
        planSchema: planJsonSchema(),
        limits,
      });
      return accept(withOwnedFields(candidate, request.objective), `model ${model.name}`);
    },
  };
}
