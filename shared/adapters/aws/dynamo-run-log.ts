/**
 * The run's log on DynamoDB (shared/ports/run-log.ts). A batch is one item, `RUN#<runId>` / `LOG#<version>`, put
 * only where none is (the run's version is the condition: two writers never both commit one version), carrying its
 * events, its record images and effects (large ones out of line, dynamo-blobs.ts) and its outbox, so the batch and
 * its announcement land together and the table's stream hands the announcement to the relay.
 *
 * Projection writes each image over an older copy only (`v`, the version of the batch that wrote it): a repeat after
 * a crash, or a slow writer behind a newer one, changes nothing. A step's image is written attribute by attribute:
 * the step's execution writes the output of its attempt on the same item, which the decider never holds, and a
 * generation that moves on drops it.
 */

import { isConflictError } from '../../errors.ts';
import type { EventType } from '../../events/catalog.ts';
import { encodeOutbox, OUTBOX_ATTRIBUTE } from '../../events/outbox.ts';
import { forEachInPool } from '../../pool.ts';
import type { StepRecord } from '../../ports/records/steps.ts';
import type { CommittedBatch, RunLog } from '../../ports/run-log.ts';
import type { Store } from '../../ports/store.ts';
import { encodeFields, type Item } from './dynamo-attributes.ts';
import { offload } from './dynamo-blobs.ts';
import { ENTITY_ATTRIBUTE, encodeApproval, encodeRun, stepCodecs, stringItem } from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import {
  batchPutItems,
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY } from './table-layout.ts';

const LOG_PREFIX = 'LOG#';
const VERSION_ATTRIBUTE = 'v';
const BATCH_ATTRIBUTE = 'batch';

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
  await conditionalUpdate(ctx, itemKeys.step(step.runId, step.stepId), scope, update, olderThan(scope, version));
}

async function projectWhole(ctx: DynamoContext, item: Item, version: number): Promise<void> {
  const scope = new ExpressionScope();
  await conditionalPut(ctx, { ...item, [VERSION_ATTRIBUTE]: { N: String(version) } }, scope, olderThan(scope, version));
}

/** What projecting a batch writes through the store's own operations: a revision and its watchers. */
export type RevisionWrites = Pick<Store, 'putPlanRevision' | 'putWatches'>;

/** A batch's item: its version as the key, the batch itself, and its outbox (what it publishes). */
function logItem(batch: Pick<CommittedBatch, 'runId' | 'version' | 'at' | 'published'>, text?: string): Item {
  const { runId, version } = batch;
  const outbox: Item =
    batch.published.length === 0
      ? {}
      : {
          [OUTBOX_ATTRIBUTE]: {
            S: encodeOutbox({
              id: `${runId}-v${version}`,
              runId,
              at: batch.at,
              events: batch.published.map((e) => ({ type: e.detailType as EventType, detail: e.detail })),
            }),
          },
        };
  return {
    ...stringItem({ ...logKey(runId, version), [ENTITY_ATTRIBUTE]: 'log' }),
    ...(text === undefined ? {} : { [BATCH_ATTRIBUTE]: { S: text } }),
    ...outbox,
  };
}

export function createDynamoRunLog(ctx: DynamoContext, store: RevisionWrites): RunLog {
  const { stream, ...quiet } = ctx;
  /**
   * The version each run's stream last heard of. The table's stream hears of a log item once, when it is put; the
   * embedded stream hears of it when it is projected, and a batch is projected again by whoever reads the run after
   * it (a loader, the replanner): announcing each repeat again would deliver its events again, and a reader woken by
   * one (the replanner by a StepFailed) would project it again, without end.
   */
  const announced = new Map<string, number>();
  /** The batch's announcement for the embedded stream, as a stored image carries it (its events out of line). */
  const announce = (batch: CommittedBatch): void => {
    if (stream === undefined || batch.published.length === 0) return;
    if ((announced.get(batch.runId) ?? 0) >= batch.version) return;
    announced.set(batch.runId, batch.version);
    const { value } = offload(logItem(batch));
    stream({ eventName: 'INSERT', dynamodb: { NewImage: value } });
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
      // The embedded stream hears of the batch once its records are written (project): a reader woken by one of its
      // events finds them. Deployed, the table's stream comes with its own delay.
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
      // Approvals before steps: a reader that finds a step waiting for a person finds the approval it waits on.
      await forEachInPool(images.approvals, async (approval) => {
        // The run's reference first, as putApproval writes it: a run's approvals are read by their references.
        const ref = itemKeys.approvalRef(runId, approval.approvalId);
        await batchPutItems(ctx, [stringItem({ ...ref, [ENTITY_ATTRIBUTE]: 'approvalRef', stepId: approval.stepId })]);
        await projectWhole(ctx, encodeApproval(approval), version);
      });
      const moved = new Set(images.moved);
      await forEachInPool(images.steps, (step) => projectStep(ctx, step, version, moved.has(step.stepId)));
      // The run last: a reader that finds the run ended (or paused) finds its steps and approvals as the batch left them.
      if (images.run !== undefined) await projectWhole(ctx, encodeRun(images.run), version);
      announce(batch);
    },
  };
}
