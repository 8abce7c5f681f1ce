/**
 * The run's log on DynamoDB (shared/ports/run-log.ts). A batch is one item, `RUN#<runId>` / `LOG#<version>`, put
 * only where none is (the run's version is the condition: two writers never both commit one version), carrying its
 * events, its record images, effects and what it publishes (large ones out of line, dynamo-blobs.ts). Its outbox is
 * set on that item once its records are written (project), only where none is: the table's stream hands it to the
 * relay then, so whoever an event wakes finds the batch's records, and a repeat of the projection announces nothing
 * twice. A writer that dies before the outbox is set leaves the batch to the next loader, which projects and
 * announces it.
 *
 * Projection writes each image over an older copy only (`v`, the version of the batch that wrote it): a repeat after
 * a crash, or a slow writer behind a newer one, changes nothing. A step's image is written attribute by attribute:
 * the step's execution writes the output of its attempt on the same item, which the decider never holds, and a
 * generation that moves on drops it (the attempt record it carried kept as an item of its own).
 */

import { isConflictError } from '../../errors.ts';
import type { EventType } from '../../events/catalog.ts';
import { OUTBOX_ATTRIBUTE, type OutboxEntry } from '../../events/outbox.ts';
import { forEachInPool } from '../../pool.ts';
import type { StepRecord } from '../../ports/records/steps.ts';
import type { CommittedBatch, RunLog } from '../../ports/run-log.ts';
import type { Store } from '../../ports/store.ts';
import { encodeFields, type Item } from './dynamo-attributes.ts';
import {
  CARRIED_ATTEMPT_ATTRIBUTE,
  carriedAttempt,
  ENTITY_ATTRIBUTE,
  encodeApproval,
  encodeAttempt,
  encodeRun,
  stepCodecs,
  stringItem,
} from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import {
  batchPutItems,
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  getItem,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY } from './table-layout.ts';

const LOG_PREFIX = 'LOG#';
const VERSION_ATTRIBUTE = 'v';
const BATCH_ATTRIBUTE = 'batch';
/** Reads and writes of a step's move, each refused by an attempt its execution carried in between. */
const MAX_MOVE_TRIES = 3;

const logKey = (runId: string, version: number) => ({
  PK: itemKeys.runPartition(runId),
  SK: `${LOG_PREFIX}${String(version).padStart(10, '0')}`,
});

/** What the execution owns on a step item: the decider's image never writes these. */
const EXECUTION_FIELDS: ReadonlySet<string> = new Set(['output', 'attemptRecord']);

/** Written over a copy older than `version` only (or where there is none). */
function olderThan(scope: ExpressionScope, version: number): ReturnType<ExpressionScope['exists']> {
  const name = scope.name(VERSION_ATTRIBUTE);
  const value = scope.value('v', { N: String(version) });
  return `(attribute_not_exists(${name}) OR ${name} < ${value})` as ReturnType<ExpressionScope['exists']>;
}

async function projectStep(ctx: DynamoContext, step: StepRecord, version: number, moved: boolean): Promise<void> {
  const key = itemKeys.step(step.runId, step.stepId);
  for (let tries = 0; tries < MAX_MOVE_TRIES; tries++) {
    // A generation that moves on drops what its execution wrote on the item, but the attempt record carried there is
    // an attempt of the ended generation: it gets an item of its own first (the same content however often this is
    // repeated), as the attempts of a generation are kept. An execution may carry one until the move is written.
    const stored = moved ? await getItem(ctx, key) : undefined;
    if (stored !== undefined && Number(stored[VERSION_ATTRIBUTE]?.N ?? 0) >= version) return;
    const carried = carriedAttempt(stored);
    if (carried !== undefined) await conditionalPut(ctx, encodeAttempt(carried), new ExpressionScope(), undefined);
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope);
    const fields = encodeFields(stepCodecs, step);
    for (const [name, value] of Object.entries(fields)) {
      if (EXECUTION_FIELDS.has(name)) continue;
      update.set(name, value);
    }
    update.set(ENTITY_ATTRIBUTE, { S: 'step' });
    update.set(VERSION_ATTRIBUTE, { N: String(version) });
    // What the decider no longer holds on the record goes (a field cleared by a new generation, a claim dropped).
    // The execution's fields are removed once, below: naming one twice in an update is refused (overlapping paths).
    for (const name of Object.keys(stepCodecs)) {
      if (fields[name] === undefined && !EXECUTION_FIELDS.has(name)) update.remove(name);
    }
    if (moved) for (const name of EXECUTION_FIELDS) update.remove(name);
    const newer = olderThan(scope, version);
    // Moving on from an item that carried no attempt when read: only while it still carries none.
    const condition =
      moved && carried === undefined ? scope.and(newer, scope.notExists(CARRIED_ATTEMPT_ATTRIBUTE)) : newer;
    const written = await conditionalUpdate(ctx, key, scope, update, condition);
    // Refused: a newer copy is there (nothing to do), or, moving on, an attempt was carried meanwhile (read again).
    if (written !== undefined || !moved) return;
  }
}

async function projectWhole(ctx: DynamoContext, item: Item, version: number): Promise<void> {
  const scope = new ExpressionScope();
  await conditionalPut(ctx, { ...item, [VERSION_ATTRIBUTE]: { N: String(version) } }, scope, olderThan(scope, version));
}

/** What projecting a batch writes through the store's own operations: a revision and its watchers. */
export type RevisionWrites = Pick<Store, 'putPlanRevision' | 'putWatches'>;

/** What a batch publishes, as its log item's outbox announces it. */
function outboxOf(batch: Pick<CommittedBatch, 'runId' | 'version' | 'at' | 'published'>): OutboxEntry {
  const { runId, version } = batch;
  return {
    id: `${runId}-v${version}`,
    runId,
    at: batch.at,
    events: batch.published.map((e) => ({ type: e.detailType as EventType, detail: e.detail })),
  };
}

/** A batch's item: its version as the key and the batch itself. */
function logItem(batch: Pick<CommittedBatch, 'runId' | 'version'>, text: string): Item {
  const { runId, version } = batch;
  return {
    ...stringItem({ ...logKey(runId, version), [ENTITY_ATTRIBUTE]: 'log' }),
    [BATCH_ATTRIBUTE]: { S: text },
  };
}

export function createDynamoRunLog(ctx: DynamoContext, store: RevisionWrites): RunLog {
  const { stream: _stream, ...quiet } = ctx;
  /** Sets the batch's outbox on its item where none is: the stream announces it once, after its records. */
  const announce = async (batch: CommittedBatch): Promise<void> => {
    if (batch.published.length === 0) return;
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope);
    const condition = scope.notExists(OUTBOX_ATTRIBUTE);
    await conditionalUpdate(ctx, logKey(batch.runId, batch.version), scope, update, condition, outboxOf(batch));
  };
  return {
    async last(runId) {
      const query = runItemsQuery(runId, LOG_PREFIX);
      const [item] = await queryAll(ctx, { ...query, ScanIndexForward: false, Limit: 1 }, 1);
      const text = item?.[BATCH_ATTRIBUTE]?.S;
      return text === undefined ? undefined : (JSON.parse(text) as CommittedBatch);
    },

    async commit(batch) {
      const scope = new ExpressionScope();
      return conditionalPut(quiet, logItem(batch, JSON.stringify(batch)), scope, scope.notExists(PARTITION_KEY));
    },

    async project(batch) {
      const { runId, version, images } = batch;
      for (const { plan, reason } of images.revisions) {
        const watches = plan.steps.flatMap((step) =>
          (step.watches ?? []).map((resourceKey) => ({ stepId: step.id, resourceKey })),
        );
        if (watches.length > 0) await store.putWatches(runId, watches);
        // Written by this batch's first projection already, when this is a repeat: the same revision.
        await store.putPlanRevision(runId, plan, reason).catch((error: unknown) => {
          if (!isConflictError(error)) throw error;
        });
      }
      // What is pointed at before what points at it: a step shown waiting has its approval, a run shown ended has
      // its steps closed, to a reader that reads between two of these writes.
      await forEachInPool(images.approvals, async (approval) => {
        // The run's reference first, as putApproval writes it: a run's approvals are read by their references.
        const ref = itemKeys.approvalRef(runId, approval.approvalId);
        await batchPutItems(ctx, [stringItem({ ...ref, [ENTITY_ATTRIBUTE]: 'approvalRef', stepId: approval.stepId })]);
        await projectWhole(ctx, encodeApproval(approval, ctx.retentionSeconds), version);
      });
      const moved = new Set(images.moved);
      await forEachInPool(images.steps, (step) => projectStep(ctx, step, version, moved.has(step.stepId)));
      // The run item carries its status index keys and, once ended, its expiry: no write of their own.
      if (images.run !== undefined) await projectWhole(ctx, encodeRun(images.run, ctx.retentionSeconds), version);
      await announce(batch);
    },
  };
}
