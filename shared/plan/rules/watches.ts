/**
 * How many resources the steps watch (E_LIMIT): at most MAX_WATCHES_PER_STEP per step and MAX_WATCHES_PER_PLAN in
 * all. Each watch becomes a stored record per revision, so the count is what costs, not any one key. Only the
 * arrays' lengths are read, before the shape rule looks at a single key: a list over the per-step limit is left out
 * of the step's field checks altogether, so a hostile plan costs one pass over its steps, not one per watch.
 */
import { child, type IssueSink, issue } from '../issues.ts';
import { MAX_WATCHES_PER_PLAN, MAX_WATCHES_PER_STEP } from '../schema.ts';

const watchCount = (raw: unknown): number => {
  if (typeof raw !== 'object' || raw === null) return 0;
  const { watches } = raw as { watches?: unknown };
  return Array.isArray(watches) ? watches.length : 0;
};

/**
 * Reports the steps over the per-step limit and a plan over its total; returns the indexes of the steps whose
 * `watches` the shape rule must leave unread (their count alone makes the plan invalid).
 */
export function checkWatchCounts(rawSteps: readonly unknown[], issues: IssueSink): ReadonlySet<number> {
  const refused = new Set<number>();
  let total = 0;
  for (let index = 0; index < rawSteps.length; index += 1) {
    const count = watchCount(rawSteps[index]);
    total += count;
    if (count <= MAX_WATCHES_PER_STEP) continue;
    refused.add(index);
    const path = child(`/steps/${index}`, 'watches');
    issues.push(issue('E_LIMIT', path, `${count} watches exceed the limit of ${MAX_WATCHES_PER_STEP} per step`));
  }
  if (total > MAX_WATCHES_PER_PLAN)
    issues.push(issue('E_LIMIT', '/steps', `${total} watches exceed the limit of ${MAX_WATCHES_PER_PLAN} per plan`));
  return refused;
}
