/**
 * Checkpoints with evidence: what a step's success is checked against.
 *
 * - On a mutating step and on a gate (a `human:` step), `successCriteria` must hold something a machine checks
 *   (`assert`, JSONata over the output, or `outputSchema`, a stricter schema the output must also satisfy, which
 *   must be a JSON Schema 2020-12 that compiles: E_FIELD). A description alone is a note, not a criterion: such a step would
 *   "succeed" with no evidence, so the plan is refused with E_CRITERIA. Elsewhere a description alone stays a note
 *   for the agent or the reader.
 * - `expect.failure` (the step succeeds only when its capability fails that way) belongs on a step that calls a
 *   capability (`tool:`, `agent:`), not on a gate or a group, and not beside a machine-checkable criterion, which
 *   would have no output to read: E_CRITERIA. Its patterns are regular expressions that must compile (E_FIELD) and
 *   must not backtrack catastrophically (E_EXPRESSION_UNSAFE, the check JSONata's regular expressions get).
 */
import { contractValidator, metaSchemaErrors } from '../contracts.ts';
import { regexHazard } from '../expression-hazards.ts';
import { child, type IssueSink, issue } from '../issues.ts';
import type { StepView } from './shape.ts';

/** The catalog as this rule needs it: a target's side effect. */
interface SideEffects {
  get(target: string): { readonly sideEffect: string } | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkPattern(source: unknown, path: string, issues: IssueSink): void {
  if (typeof source !== 'string') return; // the shape check reports it
  try {
    new RegExp(source);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    issues.push(issue('E_FIELD', path, `not a regular expression: ${why}`));
    return;
  }
  const hazard = regexHazard(source);
  if (hazard !== undefined) issues.push(issue('E_EXPRESSION_UNSAFE', path, hazard));
}

/** A criterion's schema must be JSON Schema 2020-12 that compiles, as a catalog contract must. */
function checkSchema(schema: Record<string, unknown>, path: string, issues: IssueSink): void {
  let why: string | undefined;
  try {
    why = metaSchemaErrors(schema);
    if (why === undefined) contractValidator(schema);
  } catch (error) {
    why = error instanceof Error ? error.message : String(error);
  }
  if (why !== undefined) issues.push(issue('E_FIELD', path, `not a usable JSON Schema 2020-12: ${why}`));
}

export function checkCriteria(steps: readonly StepView[], catalog: SideEffects, issues: IssueSink): void {
  for (const { raw, path, target } of steps) {
    const criteria = raw.successCriteria;
    const expect = raw.expect;
    const checked = isRecord(criteria) && (typeof criteria.assert === 'string' || isRecord(criteria.outputSchema));
    if (isRecord(criteria) && isRecord(criteria.outputSchema))
      checkSchema(criteria.outputSchema, child(child(path, 'successCriteria'), 'outputSchema'), issues);
    if (typeof target === 'string') {
      const gate = target.startsWith('human:');
      const mutating = catalog.get(target)?.sideEffect === 'mutating';
      if ((gate || mutating) && isRecord(criteria) && !checked)
        issues.push(
          issue(
            'E_CRITERIA',
            child(path, 'successCriteria'),
            `a ${gate ? 'gate' : 'mutating step'} needs a machine-checkable criterion: add an assert (JSONata over ` +
              '$output) or an outputSchema, or leave successCriteria out; a description alone is a note, not a criterion',
          ),
        );
      if (gate && expect !== undefined)
        issues.push(
          issue('E_CRITERIA', child(path, 'expect'), 'a gate is decided by a person: it cannot expect a failure'),
        );
    } else if (target === null && expect !== undefined) {
      issues.push(
        issue('E_CRITERIA', child(path, 'expect'), 'a group calls no capability: it cannot expect a failure'),
      );
    }
    if (!isRecord(expect)) continue;
    if (checked)
      issues.push(
        issue(
          'E_CRITERIA',
          child(path, 'successCriteria'),
          'a step expected to fail has no output to check: its checkpoint is expect.failure',
        ),
      );
    const failure = expect.failure;
    if (!isRecord(failure)) continue;
    const at = child(child(path, 'expect'), 'failure');
    for (const field of ['code', 'message'] as const) checkPattern(failure[field], child(at, field), issues);
  }
}
