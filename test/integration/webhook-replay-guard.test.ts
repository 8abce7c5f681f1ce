import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { createStoreReplayGuard } from '../../shared/adapters/aws/webhook-replay-guard.ts';
import type { Store } from '../../shared/ports/store.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';

/** The deployed replay memory on the real store adapter (dynalite): conditional puts, expiry, release. */
describe('createStoreReplayGuard on dynalite', () => {
  let dynamo: TestDynamo;
  let store: Store;
  const time = { seconds: 1_893_456_000 };
  const clock = () => new Date(time.seconds * 1000);

  beforeAll(async () => {
    dynamo = await startDynalite();
    store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  it('accepts a key once until it expires', async () => {
    const guard = createStoreReplayGuard(store, clock);
    const key = 'webhook#prices#aa';

    const first = await guard.firstSeen(key, time.seconds + 300);
    const replay = await guard.firstSeen(key, time.seconds + 300);
    time.seconds += 301;
    const afterExpiry = await guard.firstSeen(key, time.seconds + 300);

    expect([first, replay, afterExpiry]).toEqual([true, false, true]);
  });

  it('lets exactly one of many racing copies through', async () => {
    const guard = createStoreReplayGuard(store, clock);

    const answers = await Promise.all(
      Array.from({ length: 5 }, () => guard.firstSeen('webhook#prices#race', time.seconds + 300)),
    );

    expect(answers.filter(Boolean)).toHaveLength(1);
  });

  it('accepts a released key again', async () => {
    const guard = createStoreReplayGuard(store, clock);
    const key = 'webhook#prices#released';
    await guard.firstSeen(key, time.seconds + 300);

    await guard.release?.(key);

    expect(await guard.firstSeen(key, time.seconds + 300)).toBe(true);
  });
});
