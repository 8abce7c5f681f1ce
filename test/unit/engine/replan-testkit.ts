/** Builders for the replan tests: small plans, and random plans with groups for the property tests. */
import fc from 'fast-check';
import type { Plan, PlanStep, StepStatus } from '../../../shared/plan/schema.ts';

export const step = (id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `step ${id}`,
  target: 'tool:echo',
  dependsOn,
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  ...overrides,
});

export const group = (id: string, dependsOn: string[] = [], parentId?: string): PlanStep => ({
  id,
  title: `group ${id}`,
  target: null,
  dependsOn,
  ...(parentId === undefined ? {} : { parentId }),
});

export const plan = (steps: PlanStep[], revision = 1): Plan => ({
  schemaVersion: 1,
  revision,
  objective: 'test objective',
  steps,
});

export const statuses = (entries: Record<string, StepStatus>): Map<string, StepStatus> =>
  new Map(Object.entries(entries));

/**
 * The research example: two parallel branches in a group, a writer joining them, a review after it.
 * research { a.search → a.fetch, b.search → b.fetch } → write → review; `other` is unrelated.
 */
export const researchPlan = (): Plan =>
  plan([
    group('research'),
    group('a', [], 'research'),
    step('a.search', [], { parentId: 'a' }),
    step('a.fetch', ['a.search'], { parentId: 'a' }),
    group('b', [], 'research'),
    step('b.search', [], { parentId: 'b' }),
    step('b.fetch', ['b.search'], { parentId: 'b' }),
    step('write', ['research']),
    step('review', ['write']),
    step('other'),
  ]);

/**
 * A random plan with groups: step i may sit in an earlier group and depend on earlier steps that are not its
 * ancestors. Returned with a random subset of its ids (the failed steps) and random statuses.
 */
export const groupedPlanArbitrary = (maxSteps = 14): fc.Arbitrary<Plan> =>
  fc.integer({ min: 1, max: maxSteps }).chain((n) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        fc.array(fc.nat(), { minLength: n, maxLength: n }),
        fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: n, maxLength: n }),
      )
      .map(([groupFlags, parentPicks, depPicks]) => {
        const steps: PlanStep[] = [];
        const parentOf = new Map<string, string | undefined>();
        for (let i = 0; i < n; i++) {
          const id = `s${i}`;
          const groups = steps.filter((s) => s.target === null).map((s) => s.id);
          const pick = (parentPicks[i] ?? 0) % (groups.length + 1);
          const parentId = pick === 0 ? undefined : groups[pick - 1];
          parentOf.set(id, parentId);
          const ancestors = new Set<string>();
          for (let p = parentId; p !== undefined; p = parentOf.get(p)) ancestors.add(p);
          const dependsOn = [
            ...new Set(
              (depPicks[i] ?? [])
                .filter((j) => j < i)
                .map((j) => `s${j}`)
                .filter((d) => !ancestors.has(d)),
            ),
          ];
          const isGroup = groupFlags[i] === true && i < n - 1;
          steps.push(
            isGroup
              ? { ...group(id, dependsOn), ...(parentId === undefined ? {} : { parentId }) }
              : step(id, dependsOn, parentId === undefined ? {} : { parentId }),
          );
        }
        return plan(steps);
      }),
  );

export const STATUS_SAMPLE: readonly StepStatus[] = ['pending', 'succeeded', 'skipped', 'failed', 'blocked', 'running'];

/** A plan, a subset of its step ids and a status for each step. */
export const replanCaseArbitrary = (maxSteps = 14) =>
  groupedPlanArbitrary(maxSteps).chain((p) =>
    fc.record({
      plan: fc.constant(p),
      failed: fc.subarray(p.steps.map((s) => s.id)),
      states: fc
        .array(fc.constantFrom(...STATUS_SAMPLE), { minLength: p.steps.length, maxLength: p.steps.length })
        .map((picked) => new Map(p.steps.map((s, i) => [s.id, picked[i] ?? 'pending']))),
    }),
  );
