/**
 * Which upstream outputs a step's expressions can read, so that `$outputs` binds those and not the step's whole
 * upstream closure. A step ten layers deep in a wide DAG has a hundred steps upstream; reading all their records
 * and sending all their outputs to the expression sandbox for every claim and verification is most of what an
 * expression costs, when the expressions name one or two of them.
 *
 * The validator (rules/references.ts) lets an expression read `$outputs` only as `$outputs.<step id>`, and refuses
 * (E_DYNAMIC_REFERENCE) whatever reaches an output it does not name: a dynamic access, the parent operator climbing
 * back to `$outputs` (`$outputs.a.%.b`), a focus binding on the step's name (`$outputs.a@$v.b`) and `$eval`. Both
 * ask the same analysis (analyseExpression's `problems`), so the ids named that way are everything a validated
 * expression can reach. A step whose expressions the analysis cannot name (a parse failure, or a refused construct
 * in a plan validated before the rule existed) binds its whole closure as before. So what every expression
 * evaluates to is unchanged.
 */
import { analyseExpression, collectExpressions } from './expressions.ts';
import type { PlanStep } from './schema.ts';

const named = new WeakMap<Pick<PlanStep, 'when' | 'input' | 'successCriteria'>, ReadonlySet<string> | null>();

function sourcesOf(step: Pick<PlanStep, 'when' | 'input' | 'successCriteria'>): string[] {
  const sources = collectExpressions(step.input, '').map((found) => found.source);
  if (step.when !== undefined) sources.push(step.when);
  const assertion = step.successCriteria?.assert;
  if (assertion !== undefined) sources.push(assertion);
  return sources;
}

function analyse(step: Pick<PlanStep, 'when' | 'input' | 'successCriteria'>): ReadonlySet<string> | null {
  const ids = new Set<string>();
  for (const source of sourcesOf(step)) {
    const analysis = analyseExpression(source);
    if (!analysis.ok || analysis.problems.length > 0) return null;
    for (const id of analysis.steps) ids.add(id);
  }
  return ids;
}

/**
 * The step ids the step's expressions (`when`, input, success assertion) can read through `$outputs`, or undefined
 * when they may read any upstream output. Memoised per step definition (plan revisions never change).
 */
export function namedOutputSteps(
  step: Pick<PlanStep, 'when' | 'input' | 'successCriteria'>,
): ReadonlySet<string> | undefined {
  let ids = named.get(step);
  if (ids === undefined) {
    ids = analyse(step);
    named.set(step, ids);
  }
  return ids ?? undefined;
}
