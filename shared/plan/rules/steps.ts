/**
 * Rules about one step at a time against the catalog: known target, contracts equal to the catalog's, the fields
 * a kind of step needs (approval for human gates, rollbackHint for mutating targets unless a segment compensates
 * them, none of the executable fields on a group), static inputs that already break the contract, and lifecycle
 * data in untrusted plans.
 */
import type { Catalog } from '../catalog.ts';
import { contractsEqual } from '../catalog.ts';
import { containsExpression } from '../expressions.ts';
import { child, type IssueSink, issue } from '../issues.ts';
import { STEP_STATUSES, TARGET_PATTERN } from '../schema.ts';
import type { StepView } from './shape.ts';

const GROUP_FORBIDDEN = ['inputSchema', 'outputSchema', 'input', 'approval', 'segment', 'onFailure'] as const;
const CONTRACT_SIDES = ['inputSchema', 'outputSchema'] as const;

/** The JSON Pointer (relative) of the first place where two JSON values differ, for the error message. */
function firstDifference(a: unknown, b: unknown, at = ''): string {
  if (contractsEqual(a, b)) return '';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return at || '(root)';
  if (Array.isArray(a) !== Array.isArray(b)) return at || '(root)';
  const aRecord = a as Record<string, unknown>;
  const bRecord = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(aRecord), ...Object.keys(bRecord)])) {
    if (!Object.hasOwn(aRecord, key) || !Object.hasOwn(bRecord, key)) return child(at, key);
    if (!contractsEqual(aRecord[key], bRecord[key])) return firstDifference(aRecord[key], bRecord[key], child(at, key));
  }
  return at || '(root)';
}

const isStatus = (v: unknown): boolean => typeof v === 'string' && (STEP_STATUSES as readonly string[]).includes(v);

export function checkSteps(
  steps: readonly StepView[],
  catalog: Catalog,
  options: { generated: boolean },
  issues: IssueSink,
): void {
  for (const step of steps) {
    const { raw, path, target } = step;
    if (options.generated) {
      if (isStatus(raw.status) && raw.status !== 'pending')
        issues.push(issue('E_NOT_PENDING', child(path, 'status'), `status must be "pending", got "${raw.status}"`));
      for (const field of ['result', 'error'] as const)
        if (raw[field] !== undefined && raw[field] !== null)
          issues.push(issue('E_NOT_PENDING', child(path, field), `${field} must be null in a new plan`));
    }
    if (target === null) {
      for (const field of GROUP_FORBIDDEN)
        if (raw[field] !== undefined)
          issues.push(issue('E_FIELD', child(path, field), `a group (target null) has no ${field}`));
      continue;
    }
    for (const side of CONTRACT_SIDES)
      if (raw[side] === undefined) issues.push(issue('E_FIELD', child(path, side), `missing required field "${side}"`));
    if (typeof target !== 'string' || !TARGET_PATTERN.test(target)) continue;

    const isHuman = target.startsWith('human:');
    if (isHuman && raw.approval === undefined)
      issues.push(
        issue('E_APPROVAL', child(path, 'approval'), `human step "${target}" needs an approval (question, timeout)`),
      );
    else if (!isHuman && raw.approval !== undefined)
      issues.push(issue('E_APPROVAL', child(path, 'approval'), `only human: steps take an approval, not ${target}`));

    const capability = catalog.get(target);
    if (!capability) {
      issues.push(issue('E_UNKNOWN_TARGET', child(path, 'target'), `target "${target}" is not in the catalog`));
      continue;
    }
    let inputContractHolds = true;
    for (const side of CONTRACT_SIDES) {
      const own = raw[side];
      if (own === undefined || contractsEqual(own, capability[side])) continue;
      if (side === 'inputSchema') inputContractHolds = false;
      const where = firstDifference(own, capability[side]);
      issues.push(
        issue(
          'E_CONTRACT_MISMATCH',
          child(path, side),
          `${side} differs from the catalog's contract for ${target} (first at ${where})`,
        ),
      );
    }
    // A failure inside a segment is answered by compensating the segment: it is not accepted, nor replanned.
    if (raw.segment !== undefined && (raw.onFailure === 'continue' || raw.onFailure === 'replan'))
      issues.push(
        issue(
          'E_FAILURE_POLICY',
          child(path, 'onFailure'),
          `onFailure "${String(raw.onFailure)}" does not fit a step of segment "${String(raw.segment)}": its failure is compensated`,
        ),
      );
    // In a segment, the capability's compensation undoes the step; without one (or outside a segment) a person
    // does, following the hint.
    const compensated = raw.segment !== undefined && capability.compensate !== undefined;
    if (capability.sideEffect === 'mutating' && raw.rollbackHint === undefined && !compensated)
      issues.push(
        issue(
          'E_MISSING_ROLLBACK',
          child(path, 'rollbackHint'),
          raw.segment === undefined
            ? `${target} is mutating: the step needs a rollbackHint`
            : `${target} is mutating and names no compensation: a step in segment "${String(raw.segment)}" needs a rollbackHint a person acts on`,
        ),
      );
    // Inputs may be completed at run time, so only an input without any expression is final enough to check; and
    // only against a contract the step agrees on (a mismatch is already reported, once).
    if (raw.input !== undefined && inputContractHolds && !containsExpression(raw.input)) {
      const check = catalog.validateInput(target, raw.input);
      if (!check.ok)
        issues.push(
          issue(
            'E_FIELD',
            child(path, 'input'),
            `input does not satisfy the inputSchema of ${target}: ${check.errors.slice(0, 3).join('; ')}`,
          ),
        );
    }
  }
}
