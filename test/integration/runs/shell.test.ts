/**
 * The shell around the run decider, on dynalite: commands go through the run's mailbox, are decided and committed
 * as batches at the run's next version, the records they changed are written where everything else reads them, and
 * their effects are performed. A writer that dies after a commit leaves its batch to be finished by the next loader.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../../shared/adapters/aws/dynamo-store.ts';
import { createLocalMailbox } from '../../../shared/adapters/local/mailbox.ts';
import type { RunCommand, RunCommandInput } from '../../../shared/engine/run/commands.ts';
import { announcementsOf, type StreamRecord } from '../../../shared/events/outbox.ts';
import type { Executions, MachineName } from '../../../shared/ports/executions.ts';
import type { Mailbox } from '../../../shared/ports/mailbox.ts';
import type { RunLog } from '../../../shared/ports/run-log.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { createRunShell } from '../../../shared/services/runs/shell.ts';
import { planOf, SETTINGS } from '../../support/decider.ts';
import { startDynalite, type TestDynamo } from '../../support/dynalite.ts';
import { uniqueId } from '../../support/store-fixtures.ts';

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(() => dynamo.stop());

class Started implements Executions {
  readonly names: string[] = [];
  readonly answered: { token: string; output: unknown }[] = [];
  async start(_machine: MachineName, name: string) {
    this.names.push(name);
    return { executionId: name, started: true };
  }
  async sendTaskSuccess(token: string, output: unknown) {
    this.answered.push({ token, output });
  }
  async sendTaskFailure() {}
  async stop() {}
  async stopNamed() {}
}

function setUp(wrap: (log: RunLog) => RunLog = (log) => log, stream?: (record: StreamRecord) => void) {
  const options = { client: dynamo.client, tableName: dynamo.tableName, ...(stream ? { stream } : {}) };
  const store: Store = createDynamoStore(options);
  const runLog = wrap(createDynamoRunLogOf(options, store));
  const executions = new Started();
  const timers = { schedule: async () => {} };
  let box: Pick<Mailbox, 'send'> | undefined;
  const shellDeps = {
    store,
    runLog,
    executions,
    timers,
    mailbox: {
      send: async (runId: string, command: RunCommandInput) => {
        if (box === undefined) throw new Error('the mailbox is used before it is built');
        await box.send(runId, command);
      },
    },
    clock: () => new Date(),
    settings: SETTINGS,
    targets: () => ({ sideEffect: 'none' as const }),
  };
  const shell = createRunShell(shellDeps);
  const mailbox = createLocalMailbox({ handle: shell.handle, retryMs: 1 });
  box = mailbox;
  return { store, runLog, executions, shell, mailbox, shellDeps };
}

/** A batch's item in the table, as the stream would see it. */
async function itemOf(runId: string, sortKey: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await dynamo.client.send(
    new GetItemCommand({
      TableName: dynamo.tableName,
      Key: { PK: { S: `RUN#${runId}` }, SK: { S: sortKey } },
      ConsistentRead: true,
    }),
  );
  return Item;
}

/** The run's log head as it is when version `version` is committed (the head holds the last batch only). */
async function logItemOf(runId: string, version: number): Promise<Record<string, unknown> | undefined> {
  const head = (await itemOf(runId, 'HEAD')) as { version?: { N?: string } } | undefined;
  return head?.version?.N === String(version) ? head : undefined;
}

async function aRun(store: Store): Promise<string> {
  const runId = uniqueId('run');
  const now = new Date().toISOString();
  await store.createRun({
    runId,
    status: 'planning',
    objective: 'o',
    revision: 0,
    createdAt: now,
    updatedAt: now,
    replans: 0,
  });
  return runId;
}

const plan = planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]);

describe('the run shell', () => {
  it('commits each batch at the next version and writes the records it changed where they are read', async () => {
    const { store, runLog, executions, mailbox } = setUp();
    const runId = await aRun(store);
    expect(await mailbox.ask(runId, { kind: 'StartRun', plan })).toEqual({ ok: true });
    expect((await runLog.last(runId))?.version).toBe(1);
    expect((await store.getRun(runId))?.status).toBe('running');
    expect((await store.getPlanRevision(runId, 1))?.plan.steps).toHaveLength(2);
    const a = await store.getStep(runId, 'a');
    expect(a).toMatchObject({ status: 'running', generation: 1 });
    expect(executions.names).toEqual([a?.claimedBy]);

    const ended = {
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: a?.claimedBy ?? '',
      attempt: 1,
    } as const;
    await mailbox.ask(runId, { ...ended, outcome: { kind: 'succeeded', confidence: 0.9 }, note: 'done' });
    expect(await store.getStep(runId, 'a')).toMatchObject({ status: 'succeeded', confidence: 0.9 });
    expect((await store.getStep(runId, 'b'))?.status).toBe('running');
    expect((await runLog.last(runId))?.version).toBe(2);
  });

  it('answers 404 for a run it does not have, and commits nothing for a command that decides nothing', async () => {
    const { store, runLog, mailbox } = setUp();
    expect(await mailbox.ask('nope', { kind: 'CancelRun', compensate: false, by: null })).toMatchObject({
      ok: false,
      status: 404,
    });
    const runId = await aRun(store);
    await mailbox.ask(runId, { kind: 'StartRun', plan });
    await mailbox.ask(runId, { kind: 'StartRun', plan });
    expect((await runLog.last(runId))?.version).toBe(1);
  });

  it("keeps a step's output, written by its execution, when the decider writes the step", async () => {
    const { store, mailbox } = setUp();
    const runId = await aRun(store);
    await mailbox.ask(runId, { kind: 'StartRun', plan });
    const a = await store.getStep(runId, 'a');
    await store.transitionStep(runId, 'a', { generation: 1, from: ['running'] }, { output: { value: 42 } });
    await mailbox.ask(runId, {
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: a?.claimedBy ?? '',
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'done',
    });
    expect(await store.getStep(runId, 'a')).toMatchObject({ status: 'succeeded', output: { value: 42 } });
  });

  it('finishes a batch whose writer died after the commit: the next loader writes its records and effects', async () => {
    let dying = true;
    const first = setUp((log) => ({
      ...log,
      project: async (batch) => {
        if (dying) throw new Error('died after the commit');
        await log.project(batch);
      },
    }));
    const runId = await aRun(first.store);
    await expect(first.shell.handle(runId, [{ kind: 'StartRun', plan }])).rejects.toThrow('died after the commit');
    expect((await first.store.getRun(runId))?.status).toBe('planning');
    expect(first.executions.names).toEqual([]);

    dying = false;
    const second = setUp();
    const cancel: Omit<RunCommand & { kind: 'CancelRun' }, 'at'> = { kind: 'CancelRun', compensate: false, by: 'ana' };
    await second.mailbox.ask(runId, cancel);
    expect(second.executions.names).toHaveLength(1);
    expect(await second.store.getStep(runId, 'a')).toMatchObject({ status: 'cancelled' });
    expect((await second.store.getRun(runId))?.status).toBe('cancelled');
    expect((await second.runLog.last(runId))?.version).toBe(2);
  });

  it('decides a batch again on a fresh copy when another writer took its version', async () => {
    const one = setUp();
    const two = setUp();
    const runId = await aRun(one.store);
    await one.mailbox.ask(runId, { kind: 'StartRun', plan });
    await two.mailbox.ask(runId, { kind: 'CancelRun', compensate: false, by: 'bo' });
    // `one` still holds version 1 in memory: its commit finds version 2 taken, and it decides again on the run as is.
    expect(await one.mailbox.ask(runId, { kind: 'CancelRun', compensate: false, by: 'ana' })).toMatchObject({
      ok: true,
      value: { status: 'cancelled' },
    });
    expect((await one.store.getRun(runId))?.terminal?.evidence.requestedBy).toBe('bo');
  });

  it('announces a batch once, on its last record written, however often its records are written again', async () => {
    const seen: { types: string[]; stepA: string | undefined }[] = [];
    const logItems: (Record<string, unknown> | undefined)[] = [];
    let store: Store | undefined;
    const reads: Promise<void>[] = [];
    let dying = true;
    const first = setUp(
      (log) => ({
        ...log,
        project: async (batch) => {
          // Committed, not yet written out: the batch's item carries no outbox for the table's stream to see yet.
          logItems.push(await logItemOf(batch.runId, batch.version));
          await log.project(batch);
          if (dying) throw new Error('died after the records, before the effects');
        },
      }),
      (record) => {
        // What a reader the event wakes finds: the batch's records are there.
        for (const entry of announcementsOf([record]))
          reads.push(
            (async () => {
              const a = await store?.getStep(entry.runId, 'a');
              seen.push({ types: entry.events.map((e) => e.type), stepA: a?.status });
            })(),
          );
      },
    );
    store = first.store;
    const runId = await aRun(first.store);
    await expect(first.shell.handle(runId, [{ kind: 'StartRun', plan }])).rejects.toThrow('died after the records');
    dying = false;
    // The next loader finishes the batch: its records and effects again, its announcement not again.
    await first.shell.handle(runId, [{ kind: 'CancelRun', compensate: false, by: 'ana' }]);
    await Promise.all(reads);
    // Version 1 written out twice (the loader finishes it), version 2 once: before its first writing out, no outbox.
    expect(logItems).toHaveLength(3);
    for (const item of [logItems[0], logItems[2]]) {
      expect(item).toBeDefined();
      expect(item).not.toHaveProperty('outbox');
    }
    expect(seen.map((s) => s.types[0])).toEqual(['RunStarted', 'RunFinished']);
    expect(seen[0]?.stepA).toBe('running');
    // The outbox rode on each batch's last write, the run's record (both batches changed it), never on the head.
    expect((await itemOf(runId, 'HEAD'))?.outbox).toBeUndefined();
    const runItem = (await itemOf(runId, 'RUN')) as { outbox?: { S?: string } } | undefined;
    expect(JSON.parse(runItem?.outbox?.S ?? '{}')).toMatchObject({ id: `${runId}-v2` });
  });
});
