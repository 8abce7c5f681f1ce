/**
 * The first pass over an untrusted plan value: is it a v1 plan document, field by field? Each step is checked on
 * its own, so one broken step neither hides the problems of the others nor stops the later (graph, catalog,
 * expression) rules, which read only the fields that are well-formed through a StepView.
 */
import type { z } from 'zod';
import { child, IssueList, type IssueSink, issue } from '../issues.ts';
import { MAX_JSON_DEPTH } from '../json.ts';
import { PLAN_SCHEMA_VERSION, type Plan, type PlanStep, planSchema, planStepSchema } from '../schema.ts';
import { isCertainlyValidStep, nestsDeeperThan } from './fast-shape.ts';
import { checkWatchCounts } from './watches.ts';

/** What the later rules may rely on about one step, whatever state the rest of it is in. */
export interface StepView {
  readonly index: number;
  /** `/steps/<index>` */
  readonly path: string;
  readonly raw: Readonly<Record<string, unknown>>;
  /** The id when it is a string (a malformed id is an E_FIELD; using it anyway avoids follow-on errors). */
  readonly id: string | undefined;
  /** null for a group; undefined when the target is missing or not a string. */
  readonly target: string | null | undefined;
  readonly parentId: string | undefined;
  /** The dependsOn array when it is one, else []; non-string entries are left to the E_FIELD report. */
  readonly dependsOn: readonly unknown[];
  /** The step exactly as the schema reads it, or undefined when it has an E_FIELD. */
  readonly parsed: PlanStep | undefined;
}

export interface ShapeResult {
  /** Bounded (IssueList): the later rules add theirs to the same list. */
  readonly issues: IssueList;
  /** false when nothing more can be said: not an object, an unknown schemaVersion, or steps not an array. */
  readonly checkable: boolean;
  readonly steps: readonly StepView[];
  /** The whole plan as the schema reads it, when it has no E_FIELD or E_SCHEMA_VERSION at all. */
  readonly plan: Plan | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const headerSchema = planSchema.omit({ schemaVersion: true, steps: true });

const describeValue = (value: unknown): string => {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
};

function valueAt(root: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let node: unknown = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key))
      return { found: false, value: undefined };
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return { found: true, value: node };
}

/** z.json() reports "Invalid input" on the whole value; find the innermost member that is not JSON. */
function innermostUnionPath(zodIssue: z.core.$ZodIssue): PropertyKey[] {
  const path = [...zodIssue.path];
  let current: z.core.$ZodIssue = zodIssue;
  while (current.code === 'invalid_union') {
    const nested: z.core.$ZodIssue | undefined = current.errors.flat().find((e) => e.path.length > 0);
    if (!nested) break;
    path.push(...nested.path);
    current = nested;
  }
  return path;
}

/**
 * Turns zod issues about `value` (found at `base`) into E_FIELD issues with JSON Pointer paths, into `out` one by one
 * (150,000 of them spread into one push overflowed the stack).
 */
export function fieldIssues(
  zodIssues: readonly z.core.$ZodIssue[],
  value: unknown,
  base: string,
  out: IssueSink,
): void {
  const at = (path: readonly PropertyKey[]): string =>
    path.reduce<string>((p, key) => child(p, typeof key === 'number' ? key : String(key)), base);
  for (const zodIssue of zodIssues) {
    if (zodIssue.code === 'unrecognized_keys') {
      for (const key of zodIssue.keys)
        out.push(issue('E_FIELD', at([...zodIssue.path, key]), `unknown field "${key}"`));
      continue;
    }
    if (zodIssue.code === 'invalid_union') {
      const path = innermostUnionPath(zodIssue);
      const { value: bad } = valueAt(value, path);
      out.push(issue('E_FIELD', at(path), `must be a JSON value, got ${describeValue(bad)}`));
      continue;
    }
    if (zodIssue.code === 'invalid_type') {
      const { found, value: bad } = valueAt(value, zodIssue.path);
      const name = String(zodIssue.path[zodIssue.path.length - 1] ?? 'value');
      const message = found
        ? `must be ${zodIssue.expected === 'array' ? 'an array' : `a ${zodIssue.expected}`}, got ${describeValue(bad)}`
        : `missing required field "${name}"`;
      out.push(issue('E_FIELD', at(zodIssue.path), message));
      continue;
    }
    out.push(issue('E_FIELD', at(zodIssue.path), zodIssue.message));
  }
}

function withoutKey(record: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _left, ...rest } = record;
  return rest;
}

function viewOf(raw: Record<string, unknown>, index: number, parsed: PlanStep | undefined): StepView {
  const { id, target, parentId, dependsOn } = raw;
  return {
    index,
    path: `/steps/${index}`,
    raw,
    id: typeof id === 'string' ? id : undefined,
    target: target === null || typeof target === 'string' ? target : undefined,
    parentId: typeof parentId === 'string' ? parentId : undefined,
    dependsOn: Array.isArray(dependsOn) ? dependsOn : [],
    parsed,
  };
}

/** Checks the document shape: the root, schemaVersion, the plan's own fields and each step's fields. */
export function checkShape(value: unknown): ShapeResult {
  const issues = new IssueList();
  if (!isRecord(value)) {
    issues.push(issue('E_FIELD', '', `a plan must be a JSON object, got ${describeValue(value)}`));
    return { issues, checkable: false, steps: [], plan: undefined };
  }
  const version = value.schemaVersion;
  if (version === undefined) {
    // Read as v1 anyway: a plan that only forgot the field should get all its other problems reported too.
    issues.push(issue('E_SCHEMA_VERSION', '/schemaVersion', `missing schemaVersion (expected ${PLAN_SCHEMA_VERSION})`));
  } else if (version !== PLAN_SCHEMA_VERSION) {
    issues.push(
      issue('E_SCHEMA_VERSION', '/schemaVersion', `unsupported schemaVersion ${JSON.stringify(version)} (expected 1)`),
    );
    return { issues, checkable: false, steps: [], plan: undefined };
  }
  const { schemaVersion: _version, steps: rawSteps, ...header } = value;
  const headerResult = headerSchema.safeParse(header);
  if (!headerResult.success) fieldIssues(headerResult.error.issues, header, '', issues);
  if (!Array.isArray(rawSteps)) {
    const message =
      rawSteps === undefined ? 'missing required field "steps"' : `must be an array, got ${describeValue(rawSteps)}`;
    issues.push(issue('E_FIELD', '/steps', message));
    return { issues, checkable: false, steps: [], plan: undefined };
  }
  if (rawSteps.length === 0) issues.push(issue('E_FIELD', '/steps', 'a plan needs at least one step'));
  // Before any step is read key by key: a list of watches over its limit is reported (E_LIMIT) and never walked.
  const unreadWatches = checkWatchCounts(rawSteps, issues);
  const steps: StepView[] = [];
  const parsedSteps: PlanStep[] = [];
  rawSteps.forEach((given: unknown, index) => {
    const base = `/steps/${index}`;
    if (!isRecord(given)) {
      issues.push(issue('E_FIELD', base, `a step must be a JSON object, got ${describeValue(given)}`));
      return;
    }
    const raw = unreadWatches.has(index) ? withoutKey(given, 'watches') : given;
    if (isCertainlyValidStep(raw)) {
      // zod would return an equal copy; the value itself is the step.
      parsedSteps.push(raw as PlanStep);
      steps.push(viewOf(raw, index, raw as PlanStep));
      return;
    }
    // Recursive checks (zod's included) must never meet a value deep enough to exhaust the stack, or a cycle.
    const tooDeep = Object.keys(raw).filter((key) => nestsDeeperThan(raw[key], MAX_JSON_DEPTH - 3));
    if (tooDeep.length > 0) {
      for (const key of tooDeep)
        issues.push(issue('E_FIELD', child(base, key), `nested deeper than ${MAX_JSON_DEPTH} levels, or cyclic`));
      const rest = Object.fromEntries(Object.entries(raw).filter(([key]) => !tooDeep.includes(key)));
      steps.push(viewOf(rest, index, undefined));
      return;
    }
    const result = planStepSchema.safeParse(raw);
    if (result.success) parsedSteps.push(result.data);
    else fieldIssues(result.error.issues, raw, base, issues);
    steps.push(viewOf(raw, index, result.success ? result.data : undefined));
  });
  const plan =
    issues.length === 0 && headerResult.success
      ? { schemaVersion: PLAN_SCHEMA_VERSION as typeof PLAN_SCHEMA_VERSION, ...headerResult.data, steps: parsedSteps }
      : undefined;
  return { issues, checkable: true, steps, plan };
}
