/** Small builders shared by the engine tests: plan steps and random DAG plans for property tests. */
import fc from 'fast-check';
import type { PlanStep } from '../../../shared/plan/schema.ts';

export const step = (id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `step ${id}`,
  target: 'tool:echo',
  dependsOn,
  ...overrides,
});

export const group = (id: string, dependsOn: string[] = [], parentId?: string): PlanStep => ({
  id,
  title: `group ${id}`,
  target: null,
  dependsOn,
  ...(parentId === undefined ? {} : { parentId }),
});

/** A random flat DAG: step i may depend only on steps before it. */
export const dagArbitrary = (maxSteps = 12): fc.Arbitrary<PlanStep[]> =>
  fc
    .integer({ min: 1, max: maxSteps })
    .chain((n) =>
      fc
        .array(fc.array(fc.nat({ max: Math.max(0, n - 1) }), { maxLength: 3 }), { minLength: n, maxLength: n })
        .map((deps) =>
          deps.map((picks, i) => step(`s${i}`, [...new Set(picks.filter((j) => j < i).map((j) => `s${j}`))])),
        ),
    );
