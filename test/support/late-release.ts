/**
 * The set-up the late-release tests share: a chain a → b → c whose b finished generation 1 with its release of c
 * held on the way to the store, then an invalidation of a whose generation 2 is held at its claim, so b and c wait
 * in their generation 2 while b's generation-1 release of c is still to come. Each test then moves c on its own way
 * (a second invalidation, a revision) before letting the release and the claim go.
 */
import { expect } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type LocalStack, plan, step } from './local-stack.ts';
import type { Hold, StoreFaults } from './stack-faults.ts';

export interface LateRelease {
  readonly runId: string;
  /** b's generation-1 release of c, held. */
  readonly late: Hold;
  /** a's generation-2 claim, held. */
  readonly claimOfA: Hold;
}

export async function lateReleaseAfterInvalidation(
  stack: LocalStack,
  faults: StoreFaults,
  objective: string,
): Promise<LateRelease> {
  const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });
  const late = faults.hold({
    method: ['releaseLastDependency', 'releaseDependency'],
    match: (call) => call.runId === faults.runIdFor(objective) && call.args[1] === 'c',
  });
  const runId = await stack.startRun({ plan: plan(objective, [echo('a'), echo('b', ['a']), echo('c', ['b'])]) });
  await late.arrived;
  const claimOfA = faults.hold({
    method: 'transitionStep',
    match: (call) =>
      call.runId === runId && call.args[1] === 'a' && (call.args[2] as { generation: number }).generation === 2,
  });
  expect((await stack.request('POST', `/runs/${runId}/steps/a/invalidate`, { reason: 'changed' })).status).toBe(202);
  await claimOfA.arrived;
  return { runId, late, claimOfA };
}
