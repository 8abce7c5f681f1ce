/**
 * Nothing succeeded downstream of a failed or blocked step: a succeeded step has no failed or blocked step
 * anywhere upstream of it, and each of its direct upstream steps released it (succeeded or skipped).
 */
import { type InvariantCheck, RELEASING_STEP_STATUSES, type Violation, violation } from './types.ts';

const STOPPING = new Set(['failed', 'blocked']);

export const checkDownstream: InvariantCheck = (run) => {
  const byId = new Map(run.steps.map((s) => [s.id, s]));
  const found: Violation[] = [];
  const upstreamOf = (id: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [...(byId.get(id)?.dependsOn ?? [])];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(byId.get(next)?.dependsOn ?? []));
    }
    return seen;
  };
  for (const step of run.steps) {
    if (step.status !== 'succeeded') continue;
    const stopped = [...upstreamOf(step.id)].filter((id) => STOPPING.has(byId.get(id)?.status ?? ''));
    if (stopped.length > 0)
      found.push(
        violation(
          run,
          'downstream-of-failure',
          `${step.id} succeeded downstream of ${stopped.map((id) => `${id}=${byId.get(id)?.status}`).join(', ')}`,
        ),
      );
    const unreleased = step.dependsOn.filter((id) => {
      const upstream = byId.get(id);
      return upstream !== undefined && !RELEASING_STEP_STATUSES.has(upstream.status) && !STOPPING.has(upstream.status);
    });
    if (unreleased.length > 0)
      found.push(
        violation(
          run,
          'downstream-of-failure',
          `${step.id} succeeded though its upstream ${unreleased.map((id) => `${id}=${byId.get(id)?.status}`).join(', ')} never released it`,
        ),
      );
  }
  return found;
};
