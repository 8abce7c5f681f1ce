/**
 * Shared by the plan tests: the fixture catalog, builders for small valid plans over it (a step gets its target's
 * contracts copied from the catalog), and the codes of a validation result.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parseCatalog } from '../../../shared/plan/catalog.ts';
import type { PlanIssue } from '../../../shared/plan/issues.ts';
import {
  type Plan,
  type PlanStep,
  STEP_ID_PATTERN,
  STEP_STATUSES,
  TARGET_PATTERN,
} from '../../../shared/plan/schema.ts';

export const fixturePath = (name: string): string => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
export const readFixture = (name: string): string => readFileSync(fixturePath(name), 'utf8');
export const catalogText = readFixture('catalog.json');
export const catalog = parseCatalog(catalogText);

const INPUTS: Record<string, unknown> = {
  'tool:search': { query: 'pricing' },
  'tool:search-backup': { query: 'pricing' },
  'tool:fetch': { url: 'https://example.com' },
  'agent:writer': { sources: [] },
  'human:review': { report: 'draft' },
  'tool:deploy': { version: '1.0.0' },
};

/** A valid executable step for `target` (default tool:fetch), with the extra fields the target needs. */
export function step(id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep {
  const target = (overrides.target ?? 'tool:fetch') as string;
  const capability = catalog.get(target);
  const base: PlanStep = {
    id,
    title: `Step ${id}`,
    target,
    dependsOn,
    ...(INPUTS[target] === undefined ? {} : { input: structuredClone(INPUTS[target]) as PlanStep['input'] }),
    ...(capability
      ? { inputSchema: structuredClone(capability.inputSchema), outputSchema: structuredClone(capability.outputSchema) }
      : { inputSchema: {}, outputSchema: {} }),
  };
  if (target.startsWith('human:')) base.approval = { question: 'Approve?', timeoutSeconds: 60 };
  if (capability?.sideEffect === 'mutating') base.rollbackHint = 'undo it';
  return { ...base, ...overrides };
}

export const group = (id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `Group ${id}`,
  target: null,
  dependsOn,
  ...overrides,
});

export const plan = (steps: PlanStep[], overrides: Partial<Plan> = {}): Plan => ({
  schemaVersion: 1,
  revision: 1,
  objective: 'Test objective',
  steps,
  ...overrides,
});

export const codes = (result: { errors: readonly PlanIssue[] }): string[] => result.errors.map((e) => e.code);

/** The errors of a result as `CODE path` strings, easy to compare in assertions. */
export const where = (result: { errors: readonly PlanIssue[] }): string[] =>
  result.errors.map((e) => `${e.code} ${e.path}`);

const nonBlank = (max: number) => fc.string({ minLength: 1, maxLength: max }).filter((s) => s.trim().length > 0);
const expression = fc.string({ maxLength: 30 }).map((body) => `{%${body}%}`);
type Json = Exclude<PlanStep['input'], undefined>;
// JSON has a single zero: -0 is written as 0, so values are taken as JSON reads them back.
const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as Json);
const zeroOrMore = (max: number) => fc.double({ min: 0, max, noNaN: true }).map((x) => (Object.is(x, -0) ? 0 : x));

/** Any step plan format v1 accepts (the zod schema), each optional field present or not. */
export const arbitraryStep: fc.Arbitrary<PlanStep> = fc.record(
  {
    id: fc.stringMatching(STEP_ID_PATTERN),
    title: nonBlank(200),
    description: fc.string({ maxLength: 40 }),
    target: fc.oneof(fc.constant(null), fc.stringMatching(TARGET_PATTERN)),
    parentId: fc.string({ maxLength: 10 }),
    dependsOn: fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
    input: json,
    when: expression,
    inputSchema: fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4 }),
    outputSchema: fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4 }),
    successCriteria: fc.record(
      { description: fc.string({ maxLength: 20 }), assert: expression },
      { requiredKeys: ['description'] },
    ),
    maxRetries: fc.integer({ min: 0, max: 10 }),
    confidenceThreshold: zeroOrMore(1),
    rollbackHint: nonBlank(50),
    approval: fc.record({ question: nonBlank(50), timeoutSeconds: fc.integer({ min: 1, max: 1e9 }) }),
    watches: fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 3 }),
    estimatedDurationSeconds: zeroOrMore(1e9),
    status: fc.constantFrom(...STEP_STATUSES),
    result: json,
    error: fc.oneof(
      fc.constant(null),
      fc.record(
        {
          code: fc.string({ maxLength: 8 }),
          message: fc.string({ maxLength: 20 }),
          retryable: fc.boolean(),
          details: json,
        },
        { requiredKeys: ['code', 'message'] },
      ),
    ),
  },
  { requiredKeys: ['id', 'title', 'target', 'dependsOn'] },
);

const holdsUnsafeInteger = (value: unknown): boolean => {
  let found = false;
  JSON.parse(JSON.stringify(value), (_key, v: unknown) => {
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) found = true;
    return v;
  });
  return found;
};

/**
 * Any plan plan format v1 accepts, valid or not against the catalog and the graph rules. The free-form JSON of
 * schemas and inputs may come out with a `"__proto__"` key now and then, or a whole number past 2^53-1 (which JSON
 * text holds in digits), which the codec refuses by contract (E_RESERVED_KEY, E_JSON, tested on their own): such
 * plans are not plans the format accepts.
 */
export const arbitraryPlan: fc.Arbitrary<Plan> = fc
  .record({
    schemaVersion: fc.constant(1 as const),
    revision: fc.integer({ min: 1, max: 1e6 }),
    objective: nonBlank(100),
    steps: fc.array(arbitraryStep, { minLength: 1, maxLength: 5 }),
  })
  .filter((plan) => !JSON.stringify(plan).includes('"__proto__":') && !holdsUnsafeInteger(plan));
