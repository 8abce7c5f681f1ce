/**
 * E_EXPRESSION: every `{% … %}` in a step's input, its `when` and its success assertion must parse, and may read
 * `$outputs` only of steps upstream of the step (its transitive effective dependencies, groups included).
 * E_DYNAMIC_REFERENCE: it must name those steps statically; what could reach an output it does not name (a
 * dynamic access to `$outputs`, the parent operator or a focus binding leading back to it, `$eval`) cannot be
 * checked, so it is refused (see ../expressions.ts). E_EXPRESSION_UNSAFE: it may not hold what only a bound of the
 * expression sandbox would stop (a backtracking-prone regular expression, a recursive function; see
 * ../expression-hazards.ts).
 */

import { analyseExpression, collectExpressions, type FoundExpression, isExpression } from '../expressions.ts';
import { child, type IssueSink, issue } from '../issues.ts';
import type { StepView } from './shape.ts';
import type { StructureResult } from './structure.ts';
import { UpstreamIndex } from './upstream.ts';

// How far up the group tree the cheap upstream test looks; anything it cannot see goes to the UpstreamIndex.
const MAX_ANCESTOR_WALK = 16;

function expressionsOf(step: StepView): FoundExpression[] {
  const { raw, path } = step;
  const found = raw.input === undefined ? [] : collectExpressions(raw.input, child(path, 'input'));
  if (isExpression(raw.when)) found.push({ path: child(path, 'when'), source: raw.when });
  const criteria = raw.successCriteria;
  if (typeof criteria === 'object' && criteria !== null && !Array.isArray(criteria)) {
    const assertion = (criteria as Record<string, unknown>).assert;
    if (isExpression(assertion))
      found.push({ path: child(child(path, 'successCriteria'), 'assert'), source: assertion });
  }
  return found;
}

/**
 * The cheap upstream test: a direct dependency of the step or of one of its groups, or a step inside a group so
 * depended on. Most expressions read a direct dependency; the rest go to the UpstreamIndex.
 */
function isNearUpstream(structure: StructureResult, id: string, target: string): boolean {
  const { graph, byId } = structure;
  const direct = new Set<string>();
  let current: string | undefined = id;
  for (let level = 0; current !== undefined && level <= MAX_ANCESTOR_WALK; level += 1) {
    for (const dep of byId.get(current)?.dependsOn ?? []) if (typeof dep === 'string') direct.add(dep);
    current = graph.parentOf(current);
  }
  let ancestor: string | undefined = target;
  for (let level = 0; ancestor !== undefined && level <= MAX_ANCESTOR_WALK; level += 1) {
    if (direct.has(ancestor)) return true;
    ancestor = graph.parentOf(ancestor);
  }
  return false;
}

export function checkExpressions(
  steps: readonly StepView[],
  structure: StructureResult,
  options: { checkDistant: boolean },
  issues: IssueSink,
): void {
  const distant: { id: string; ref: string; path: string }[] = [];
  for (const step of steps) {
    const found = expressionsOf(step);
    if (found.length === 0) continue;
    const id = step.id;
    const checkUpstream = id !== undefined && !structure.duplicated.has(id);
    for (const { path, source } of found) {
      const analysis = analyseExpression(source);
      if (!analysis.ok) {
        issues.push(issue('E_EXPRESSION', path, `expression does not parse: ${analysis.message}`));
        continue;
      }
      for (const problem of analysis.problems) issues.push(issue('E_DYNAMIC_REFERENCE', path, problem));
      for (const hazard of analysis.hazards) issues.push(issue('E_EXPRESSION_UNSAFE', path, hazard));
      for (const ref of analysis.steps) {
        if (ref === id)
          issues.push(issue('E_EXPRESSION', path, `$outputs.${ref} is this step's own output (use $output)`));
        else if (!structure.byId.has(ref))
          issues.push(issue('E_EXPRESSION', path, `$outputs.${ref} names no step of the plan`));
        else if (checkUpstream && !isNearUpstream(structure, id, ref)) distant.push({ id, ref, path });
      }
    }
  }
  // With a cycle "upstream" has no clean answer (E_CYCLE says why); past the step limit the check is skipped.
  if (distant.length === 0 || structure.cyclic || !options.checkDistant) return;
  const dependsOn = (id: string): readonly string[] =>
    (structure.byId.get(id)?.dependsOn ?? []).filter((d): d is string => typeof d === 'string');
  const index = new UpstreamIndex(
    structure.graph,
    distant.map((d) => d.ref),
    dependsOn,
  );
  for (const { id, ref, path } of distant)
    if (!index.has(id, ref))
      issues.push(issue('E_EXPRESSION', path, `$outputs.${ref}: step "${ref}" is not upstream of "${id}"`));
}
