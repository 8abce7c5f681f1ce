/**
 * Two shells (two warm Lambdas) take turns on one run, as an SQS FIFO group's batches may land on either: a copy
 * kept from an earlier batch is stale once the other shell committed. A batch that decides something finds out at
 * its commit (its version is taken); a batch that decides nothing on the stale copy must find out too, or it answers
 * from the past and drops what it was sent (found by the simulation, `npm run sim -- --seed 1`).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryRunLog } from '../../../../shared/adapters/memory/run-log.ts';
import { createMemoryStore } from '../../../../shared/adapters/memory/store.ts';
import { createRunShell } from '../../../../shared/services/runs/shell.ts';
import { attemptSucceeded, planningRun, planOf, QUIET_SHELL } from '../../../support/decider.ts';

function twoShells() {
  const store = createMemoryStore();
  const runLog = createMemoryRunLog(store);
  const deps = {
    store,
    runLog,
    ...QUIET_SHELL,
    clock: () => new Date('2026-01-01T00:00:10.000Z'),
  };
  return { store, runLog, one: createRunShell(deps), two: createRunShell(deps) };
}

describe('the run shell, with a copy another shell made stale', () => {
  it('decides a batch that is a no-op on its stale copy again on the run as it is', async () => {
    const { store, runLog, one, two } = twoShells();
    const at = '2026-01-01T00:00:00.000Z';
    await store.createRun(planningRun('r', at));
    await one.handle('r', [{ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]) }]);
    await two.handle('r', [attemptSucceeded('a', (await store.getStep('r', 'a'))?.claimedBy ?? '')]);
    const b = await store.getStep('r', 'b');
    expect(b?.status).toBe('running');
    // `one` still holds version 1, where b has not started: on it, b's end is a stray word.
    await one.handle('r', [attemptSucceeded('b', b?.claimedBy ?? '')]);
    expect((await store.getStep('r', 'b'))?.status).toBe('succeeded');
    expect((await store.getRun('r'))?.status).toBe('complete');
    expect((await runLog.last('r'))?.version).toBe(3);
  });
});
