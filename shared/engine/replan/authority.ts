/**
 * Whether a revision widens the run's authority: a target with side effects (`mutating` in the catalog) that the
 * previous revision never had. Such a revision waits for a person's approval before it runs (issue 12 §5), so that
 * neither a model nor the method library can bring in a new kind of change to the world that nobody approved. A
 * mutating target already in the plan (moved, retried, given another input) is within what was approved.
 */
import type { Plan } from '../../plan/schema.ts';

/** What the catalog says of a target's side effect (undefined: not in the catalog). */
export type SideEffectOf = (target: string) => string | undefined;

/** The mutating targets `next` uses that `previous` does not, in `next`'s plan order, each once. */
export function addedMutatingTargets(
  previous: Pick<Plan, 'steps'>,
  next: Pick<Plan, 'steps'>,
  sideEffectOf: SideEffectOf,
): string[] {
  const before = new Set(previous.steps.flatMap((s) => (s.target === null ? [] : [s.target])));
  const added: string[] = [];
  for (const step of next.steps) {
    const target = step.target;
    if (target === null || before.has(target) || added.includes(target)) continue;
    if (sideEffectOf(target) === 'mutating') added.push(target);
  }
  return added;
}

/** The question a revision approval asks. */
export function revisionQuestion(revision: number, targets: readonly string[], reason: string): string {
  const what = targets.length === 1 ? `a mutating target, ${targets[0]}` : `mutating targets: ${targets.join(', ')}`;
  return `Plan revision ${revision} adds ${what}, which the run's plan did not have. Let it run? (${reason})`.slice(
    0,
    2000,
  );
}
