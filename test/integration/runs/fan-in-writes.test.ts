/**
 * A join is not rewritten on each of its parents' releases: what it waits for is derived from its upstream steps'
 * statuses by whoever reads it (shared/engine/run/releases.ts), so its item is written when it starts, not 200
 * times, growing. Counted with the embedded stack's spy on DynamoDB commands (infra/local/stack/instrument.ts), on
 * the real shell, store and run log.
 */
import { describe, expect, it } from 'vitest';
import { withPlannedSteps } from '../../../shared/engine/run/planned.ts';
import { useCountedTable } from '../../support/counted-table.ts';
import { attemptSucceeded, planningRun, planOf } from '../../support/decider.ts';

const PARENTS = 200;
const table = useCountedTable('fan-in');
const { writes } = table;

const shellOn = table.shellOn;

describe('a join of 200 parents', () => {
  it('is written once, when it starts, not on each parent release, and is read with what it waits for', async () => {
    const store = table.store();
    const parents = Array.from({ length: PARENTS }, (_, i) => `p${String(i).padStart(3, '0')}`);
    const plan = planOf([...parents.map((id) => ({ id })), { id: 'join', dependsOn: parents }]);
    const at = new Date().toISOString();
    await store.createRun(planningRun('r', at));
    const first = shellOn(store);
    await first.handle('r', [{ kind: 'StartRun', plan }]);
    const release = async (shell: ReturnType<typeof shellOn>, stepId: string) =>
      shell.handle('r', [attemptSucceeded(stepId, (await store.getStep('r', stepId))?.claimedBy ?? '')]);
    for (const id of parents.slice(0, PARENTS / 2)) await release(first, id);
    // Another decider takes over: its copy of the run is rebuilt from the records.
    const second = shellOn(store);
    for (const id of parents.slice(PARENTS / 2, PARENTS - 1)) await release(second, id);

    const run = await store.getRun('r');
    const read = withPlannedSteps(run ?? { runId: 'r', revision: 1 }, plan, await store.listSteps('r'));
    const waiting = read.find((s) => s.stepId === 'join');
    expect(waiting).toMatchObject({ status: 'pending', remaining: 1 });
    expect(waiting?.released).toHaveLength(PARENTS - 1);
    expect(writes.filter((key) => key.SK === 'STEP#join')).toHaveLength(0);

    await release(shellOn(store), parents[PARENTS - 1] ?? '');
    expect((await store.getStep('r', 'join'))?.status).toBe('running');
    expect(writes.filter((key) => key.SK === 'STEP#join')).toHaveLength(1);
  });
});
