/**
 * Retention on the DynamoDB adapter (dynalite, which has no TTL: the sweep plays its part), with a short retention
 * and a fake clock: an ended run's item carries its expiry, and when it passes, nothing of the run is left.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SweepReport, sweepExpired } from '../../infra/local/retention-sweep.ts';
import { createDynamoRetentionOf, createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import type { Retention } from '../../shared/ports/retention.ts';
import type { RunRecord, Store } from '../../shared/ports/store.ts';
import { type StoredItem, startDynalite, type TestDynamo, tableItems } from '../support/dynalite.ts';
import { anApproval, anAttempt, aPlan, aRun, aStep, at } from '../support/store-fixtures.ts';

/** An hour: the run's records are kept that long after it ends. */
const RETENTION_SECONDS = 3600;
const START = Date.parse(at(0));
/** A value far over the inline limit: it goes out of line, into blob parts. */
const large = (fill: string) => ({ text: fill.repeat(40_000) });

const keysOf = (items: readonly StoredItem[]): string[] => items.map((item) => `${item.PK?.S} ${item.SK?.S}`);

describe('retention (DynamoDB adapter, swept as the embedded runtime sweeps in place of TTL)', () => {
  let dynamo: TestDynamo;
  let store: Store;
  let retention: Retention;
  let now: Date;
  let sweep: (at: Date) => Promise<SweepReport>;
  const later = (seconds: number): Date => new Date(START + seconds * 1000);

  beforeEach(async () => {
    dynamo = await startDynalite();
    now = later(0);
    const options = {
      client: dynamo.client,
      tableName: dynamo.tableName,
      now: () => now,
      retentionSeconds: RETENTION_SECONDS,
    };
    store = createDynamoStore(options);
    retention = createDynamoRetentionOf(options);
    sweep = (at) => sweepExpired({ client: dynamo.client, tableName: dynamo.tableName, retention }, at);
  });
  afterEach(() => dynamo.stop());

  /** A run with one of every record it can leave, a rewritten large output (its first parts unreferenced). */
  async function seedRun(runId: string, fields: Partial<RunRecord> = {}): Promise<void> {
    await store.claimRunKey('default', `key-${runId}`, runId, 'hash');
    await store.createRun(aRun({ runId, status: 'running', idempotencyKey: `key-${runId}`, ...fields }));
    const plan = aPlan();
    const watched = { ...plan, steps: plan.steps.map((step) => ({ ...step, watches: [`res-${runId}`] })) };
    await store.putPlanRevision(runId, watched, 'initial');
    await store.putWatches('default', runId, [{ stepId: 'gather', resourceKey: `res-${runId}` }]);
    const step = aStep({ runId, stepId: 'gather', status: 'running' });
    await store.putSteps([step]);
    await store.transitionStep(runId, 'gather', { generation: 1, from: ['running'] }, { output: large('a') });
    await store.transitionStep(runId, 'gather', { generation: 1, from: ['running'] }, { output: large('b') });
    await store.putApproval(anApproval({ runId, input: large('c') }));
    const event = { type: 'StepStarted' as const, detail: { runId, stepId: 'gather', generation: 1, target: null } };
    await store.recordEvents([{ id: `w-${runId}`, runId, at: at(1), events: [event] }]);
  }

  const endRun = async (runId: string, seconds: number): Promise<void> => {
    now = later(seconds);
    await store.updateRun(runId, ['running'], { status: 'complete' });
  };

  const itemsOf = async (runId: string): Promise<string[]> =>
    keysOf(await tableItems(dynamo)).filter((key) => key.includes(runId));

  it('stamps only an ended run item, the retention after it ended', async () => {
    await seedRun('r-stamp');
    const stamped = async () =>
      (await tableItems(dynamo)).filter(
        (item) => item.expiresAt !== undefined && (item.PK?.S?.includes('r-stamp') || item.runId?.S === 'r-stamp'),
      );
    // The approval expires on its own, the retention after its deadline; nothing else of the open run does.
    expect(keysOf(await stamped())).toEqual([expect.stringMatching(/^APPROVAL#/)]);
    await endRun('r-stamp', 100);
    const run = (await stamped()).find((item) => item.SK?.S === 'RUN');
    expect(run?.expiresAt).toEqual({ N: String(START / 1000 + 100 + RETENTION_SECONDS) });
  });

  it('keeps an open run whatever the clock says, and an ended one until its retention has passed', async () => {
    await seedRun('r-keep');
    const before = await itemsOf('r-keep');
    expect(await sweep(later(10 * RETENTION_SECONDS))).toMatchObject({ runs: 0 });
    await endRun('r-keep', 100);
    expect(await sweep(later(100 + RETENTION_SECONDS - 1))).toEqual({ expired: 0, runs: 0 });
    expect(await itemsOf('r-keep')).toEqual(before);
  });

  it('deletes everything an expired run left, referenced or not, and nothing of another run', async () => {
    await seedRun('r-gone');
    await seedRun('r-open');
    const open = await itemsOf('r-open');
    const gone = await itemsOf('r-gone');
    // Its partition, two outputs' parts (one rewritten), the approval's, its watch, run key and approval.
    expect(gone.filter((key) => key.startsWith('RUNBLOB#r-gone#')).length).toBeGreaterThanOrEqual(3);
    expect(gone).toEqual(
      expect.arrayContaining([expect.stringMatching(/^RUNKEY#key-r-gone/), expect.stringMatching(/^WATCH#res-r-gone/)]),
    );
    await endRun('r-gone', 100);

    expect(await sweep(later(100 + RETENTION_SECONDS + 1))).toEqual({ expired: 1, runs: 1 });

    expect(await itemsOf('r-gone')).toEqual([]);
    const approvals = keysOf(await tableItems(dynamo)).filter((key) => key.startsWith('APPROVAL#'));
    expect(approvals).toHaveLength(1);
    expect(await itemsOf('r-open')).toEqual(open);
    expect((await store.listRuns()).map((run) => run.runId)).toEqual(['r-open']);
  });

  it('deletes the steps and attempts of a run spread over step partitions, which its gone item no longer names', async () => {
    await seedRun('r-wide', { startedAt: at(0), stepShards: 16 });
    await store.putSteps(['a', 'b', 'c', 'd'].map((stepId) => aStep({ runId: 'r-wide', stepId })));
    await store.putAttempt(anAttempt({ runId: 'r-wide', stepId: 'c' }));
    expect((await itemsOf('r-wide')).filter((key) => key.startsWith('RUN#r-wide#S')).length).toBeGreaterThanOrEqual(6);
    await endRun('r-wide', 100);

    expect(await sweep(later(100 + RETENTION_SECONDS + 1))).toEqual({ expired: 1, runs: 1 });

    expect(await itemsOf('r-wide')).toEqual([]);
  });

  it('leaves a run that reopened before its expiry came: the write that reopened it took the expiry away', async () => {
    await seedRun('r-again');
    await endRun('r-again', 100);
    await store.updateRun('r-again', ['complete'], { status: 'running' });
    expect(await sweep(later(100 + RETENTION_SECONDS + 1))).toEqual({ expired: 0, runs: 0 });
    expect((await store.getRun('r-again'))?.status).toBe('running');
  });

  it('purges what a run left once TTL removed its item, as the stream reports it deployed, and again harmlessly', async () => {
    await seedRun('r-ttl');
    await endRun('r-ttl', 100);
    const run = keysOf(await tableItems(dynamo)).filter((key) => key === 'RUN#r-ttl RUN');
    expect(run).toHaveLength(1);
    expect(await retention.purgeRun('r-ttl', 'key-r-ttl')).toBeGreaterThan(8);
    expect(await itemsOf('r-ttl')).toEqual([]);
    expect(await retention.purgeRun('r-ttl', 'key-r-ttl')).toBe(1);
  });

  it('collects the parts of a record outside runs with that record, at its own expiry', async () => {
    const expiresAt = START / 1000 + 60;
    await store.beginIdempotent('call-1', expiresAt, START / 1000);
    await store.completeIdempotent('call-1', large('d'), expiresAt);
    const parts = async () => keysOf(await tableItems(dynamo)).filter((key) => key.startsWith('BLOB#'));
    expect((await parts()).length).toBeGreaterThan(0);
    expect(await sweep(later(61))).toMatchObject({ runs: 0 });
    expect(await parts()).toEqual([]);
    expect(keysOf(await tableItems(dynamo))).toEqual([]);
  });
});
