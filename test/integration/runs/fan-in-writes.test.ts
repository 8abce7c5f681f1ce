/**
 * A join is not rewritten on each of its parents' releases: what it waits for is derived from its upstream steps'
 * statuses by whoever reads it (shared/engine/run/releases.ts), so its item is written when it starts, not 200
 * times, growing. Counted with the embedded stack's spy on DynamoDB commands (infra/local/stack/instrument.ts), on
 * the real shell, store and run log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessDynamo } from '../../../infra/local/dynalite-in-process.ts';
import { writtenKeys } from '../../../infra/local/stack/instrument.ts';
import { createDynamoRunLogOf, createDynamoStore } from '../../../shared/adapters/aws/dynamo-store.ts';
import { withPlannedSteps } from '../../../shared/engine/run/planned.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { createRunShell } from '../../../shared/services/runs/shell.ts';
import { attemptSucceeded, planOf, QUIET_SHELL } from '../../support/decider.ts';

const PARENTS = 200;
const writes: { PK: string; SK: string }[] = [];
let dynamo: Awaited<ReturnType<typeof startInProcessDynamo>>;
const tableName = 'fan-in';

beforeAll(async () => {
  dynamo = await startInProcessDynamo({
    tableName,
    onCommand: (command, input) => writes.push(...writtenKeys(command, input)),
  });
});
afterAll(() => dynamo.stop());

/** A shell of its own (a cold decider: it loads the run from the table), on the shared table. */
function shellOn(store: Store) {
  const options = { client: dynamo.client, tableName };
  return createRunShell({
    store,
    runLog: createDynamoRunLogOf(options, store),
    ...QUIET_SHELL,
    clock: () => new Date(),
  });
}

describe('a join of 200 parents', () => {
  it('is written once, when it starts, not on each parent release, and is read with what it waits for', async () => {
    const store = createDynamoStore({ client: dynamo.client, tableName });
    const parents = Array.from({ length: PARENTS }, (_, i) => `p${String(i).padStart(3, '0')}`);
    const plan = planOf([...parents.map((id) => ({ id })), { id: 'join', dependsOn: parents }]);
    const at = new Date().toISOString();
    await store.createRun({
      runId: 'r',
      status: 'planning',
      objective: 'o',
      revision: 0,
      createdAt: at,
      updatedAt: at,
      replans: 0,
    });
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
