/**
 * A wide layer's step writes spread over the run's step partitions (table-layout.ts), so no partition key takes a
 * whole release: the 2,000 steps one release starts land on 8 keys of about 250 each, where they all went to
 * `RUN#<id>`. A run of a few steps keeps its steps in its own partition. Counted with the embedded stack's spy on
 * DynamoDB commands (infra/local/stack/instrument.ts), on the real shell, store and run log.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../../shared/ports/store.ts';
import { useCountedTable } from '../../support/counted-table.ts';
import { attemptSucceeded, planningRun, planOf } from '../../support/decider.ts';

const WIDTH = 2_000;
const table = useCountedTable('step-partitions');
const { writes } = table;

const shellOn = table.shellOn;

async function started(store: Store, runId: string, plan: ReturnType<typeof planOf>) {
  const at = new Date().toISOString();
  await store.createRun(planningRun(runId, at));
  const shell = shellOn(store);
  await shell.handle(runId, [{ kind: 'StartRun', plan }]);
  return shell;
}

/** The partition keys the step items written since `from` went to, with how many writes each took. */
const stepWritesByKey = (from: number): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const key of writes.slice(from))
    if (key.SK.startsWith('STEP#')) counts.set(key.PK, (counts.get(key.PK) ?? 0) + 1);
  return counts;
};

describe('the step partitions of a run', () => {
  it('spread a 2,000-wide release over 8 partition keys of about 250 writes each', async () => {
    const store = table.store();
    const layer = Array.from({ length: WIDTH }, (_, i) => ({
      id: `w${String(i).padStart(4, '0')}`,
      dependsOn: ['root'],
    }));
    const shell = await started(store, 'wide', planOf([{ id: 'root' }, ...layer]));
    expect((await store.getRun('wide'))?.stepShards).toBe(8);
    const before = writes.length;
    const root = await store.getStep('wide', 'root');
    await shell.handle('wide', [attemptSucceeded('root', root?.claimedBy ?? '')]);
    const byKey = stepWritesByKey(before);
    expect([...byKey.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(WIDTH);
    expect([...byKey.keys()].sort()).toEqual(Array.from({ length: 8 }, (_, s) => `RUN#wide#S${s}`).sort());
    // An even spread: no key takes much more than its share (on one key, it would be 2,000 writes).
    expect(Math.max(...byKey.values())).toBeLessThan((WIDTH / 8) * 1.25);
    expect((await store.listSteps('wide')).filter((s) => s.status === 'running')).toHaveLength(WIDTH);
  });

  it("keep a small run's steps in the run's own partition, with no count on its record", async () => {
    const store = table.store();
    const before = writes.length;
    await started(store, 'small', planOf([{ id: 'a' }, { id: 'b' }]));
    expect((await store.getRun('small'))?.stepShards).toBeUndefined();
    expect([...stepWritesByKey(before).keys()]).toEqual(['RUN#small']);
  });
});
