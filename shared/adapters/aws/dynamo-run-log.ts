/**
 * The run's log on DynamoDB (shared/ports/run-log.ts). A run's log is one item, its head (`RUN#<runId>` / `HEAD`):
 * a batch commits by putting the head over the run's previous version only (`version`: two writers never both
 * commit one version), carrying its events, its record images, effects, what it publishes (large ones out of line,
 * dynamo-blobs.ts) and the run's steps counted by status (what `GET /runs` shows without reading a step). Only the
 * last batch can be unfinished, so only it is kept: the run's history is its audit log, not its log.
 *
 * A batch's outbox rides on the last write of its projection (the run's record, else a step's, else an
 * approval's; the head itself for a batch that changed no record), made once the others have landed: the table's
 * stream hands it to the relay then, so whoever an event wakes finds the batch's records, and a repeat of the
 * projection, refused by that record's version, announces nothing twice. Every other projected write removes an
 * outbox the item held (the relay announces only an outbox id the item's old image did not hold). A writer that dies
 * before that last write leaves the batch to the next loader, which projects and announces it.
 *
 * Projection writes each image over an older copy only (`v`, the version of the batch that wrote it): a repeat after
 * a crash, or a slow writer behind a newer one, changes nothing. A step's image is written attribute by attribute:
 * the step's execution writes the output of its attempt on the same item, which the decider never holds, and a
 * generation that moves on drops it (the attempt record it carried kept as an item of its own).
 */

import { tenantOf } from '../../config/defaults.ts';
import { isConflictError } from '../../errors.ts';
import type { EventType } from '../../events/catalog.ts';
import { OUTBOX_ATTRIBUTE, type OutboxEntry } from '../../events/outbox.ts';
import { forEachInPool } from '../../pool.ts';
import type { ApprovalRecord } from '../../ports/records/approvals.ts';
import type { StepCounts, StepRecord } from '../../ports/records/steps.ts';
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
  batchGetItems,
  batchPutItems,
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  getItem,
  outboxAttribute,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import { stepShardsOf } from './dynamo-step-keys.ts';
import { itemKeys, PARTITION_KEY } from './table-layout.ts';

/** Where a run's batches were kept before the head (one item per version): read once, for a run committed then. */
const LEGACY_LOG_PREFIX = 'LOG#';
const VERSION_ATTRIBUTE = 'v';
const HEAD_VERSION_ATTRIBUTE = 'version';
const BATCH_ATTRIBUTE = 'batch';
const COUNTS_ATTRIBUTE = 'counts';
/** Reads and writes of a step's move, each refused by an attempt its execution carried in between. */
const MAX_MOVE_TRIES = 3;

/** What the execution owns on a step item: the decider's image never writes these. */
const EXECUTION_FIELDS: ReadonlySet<string> = new Set(['output', 'attemptRecord']);

/** Written over a copy older than `version` only (or where there is none). */
function olderThan(scope: ExpressionScope, version: number): ReturnType<ExpressionScope['exists']> {
  const name = scope.name(VERSION_ATTRIBUTE);
  const value = scope.value('v', { N: String(version) });
  return `(attribute_not_exists(${name}) OR ${name} < ${value})` as ReturnType<ExpressionScope['exists']>;
}

async function projectStep(
  ctx: DynamoContext,
  step: StepRecord,
  version: number,
  moved: boolean,
  outbox: OutboxEntry | null,
  shards: number,
): Promise<void> {
  const key = itemKeys.step(step.runId, step.stepId, shards);
  for (let tries = 0; tries < MAX_MOVE_TRIES; tries++) {
    // A generation that moves on drops what its execution wrote on the item, but the attempt record carried there is
    // an attempt of the ended generation: it gets an item of its own first (the same content however often this is
    // repeated), as the attempts of a generation are kept. An execution may carry one until the move is written.
    const stored = moved ? await getItem(ctx, key) : undefined;
    if (stored !== undefined && Number(stored[VERSION_ATTRIBUTE]?.N ?? 0) >= version) return;
    const carried = carriedAttempt(stored);
    if (carried !== undefined)
      await conditionalPut(ctx, encodeAttempt(carried, shards), new ExpressionScope(), undefined);
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
    const written = await conditionalUpdate(ctx, key, scope, update, condition, outbox);
    // Refused: a newer copy is there (nothing to do), or, moving on, an attempt was carried meanwhile (read again).
    if (written !== undefined || !moved) return;
  }
}

async function projectWhole(ctx: DynamoContext, item: Item, version: number, outbox?: OutboxEntry): Promise<void> {
  const scope = new ExpressionScope();
  const stored = { ...item, [VERSION_ATTRIBUTE]: { N: String(version) }, ...outboxAttribute(outbox) };
  await conditionalPut(ctx, stored, scope, olderThan(scope, version));
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

/** The records but the last, and the last apart when `apart` (the one written after all the others). */
function splitLast<T>(records: readonly T[], apart: boolean): [readonly T[], T | undefined] {
  return apart ? [records.slice(0, -1), records.at(-1)] : [records, undefined];
}

/** The run's head as a batch leaves it: the batch itself, its version and the run's steps by status. */
function headItem(batch: CommittedBatch): Item {
  return {
    ...stringItem({ ...itemKeys.runHead(batch.runId), [ENTITY_ATTRIBUTE]: 'head' }),
    [HEAD_VERSION_ATTRIBUTE]: { N: String(batch.version) },
    [COUNTS_ATTRIBUTE]: { S: JSON.stringify(batch.counts) },
    [BATCH_ATTRIBUTE]: { S: JSON.stringify(batch) },
  };
}

export function createDynamoRunLog(ctx: DynamoContext, store: RevisionWrites): RunLog {
  const { stream: _stream, ...quiet } = ctx;
  /** Sets the outbox of a batch that wrote no record on the head, while it holds that batch: announced once. */
  const announce = async (batch: CommittedBatch, outbox: OutboxEntry): Promise<void> => {
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope);
    const condition = scope.and(
      scope.equals(HEAD_VERSION_ATTRIBUTE, { N: String(batch.version) }),
      scope.notExists(OUTBOX_ATTRIBUTE),
    );
    await conditionalUpdate(ctx, itemKeys.runHead(batch.runId), scope, update, condition, outbox);
  };
  return {
    async last(runId) {
      const head = await getItem(ctx, itemKeys.runHead(runId));
      const text =
        head?.[BATCH_ATTRIBUTE]?.S ??
        // A run committed before the head was kept: its last log item (its next commit writes the head).
        (
          await queryAll(ctx, { ...runItemsQuery(runId, LEGACY_LOG_PREFIX), ScanIndexForward: false, Limit: 1 }, 1)
        )[0]?.[BATCH_ATTRIBUTE]?.S;
      return text === undefined ? undefined : (JSON.parse(text) as CommittedBatch);
    },

    async commit(batch) {
      const scope = new ExpressionScope();
      // Over the previous version only; where there is no head yet, the run's first batch (or the first since the head).
      const condition = scope.or(
        scope.notExists(PARTITION_KEY),
        scope.equals(HEAD_VERSION_ATTRIBUTE, { N: String(batch.version - 1) }, 'previous'),
      );
      return conditionalPut(quiet, headItem(batch), scope, condition);
    },

    async project(batch) {
      const { runId, version, images } = batch;
      for (const { plan, reason } of images.revisions) {
        const watches = plan.steps.flatMap((step) =>
          (step.watches ?? []).map((resourceKey) => ({ stepId: step.id, resourceKey })),
        );
        // A batch that makes a revision current changes the run too (its revision), so its image names the tenant.
        if (watches.length > 0) await store.putWatches(tenantOf(images.run ?? {}), runId, watches);
        // Written by this batch's first projection already, when this is a repeat: the same revision.
        await store.putPlanRevision(runId, plan, reason).catch((error: unknown) => {
          if (!isConflictError(error)) throw error;
        });
      }
      // What is pointed at before what points at it: a step shown waiting has its approval, a run shown ended has
      // its steps closed, to a reader that reads between two of these writes. The last write carries the batch's
      // outbox (the stream announces it once it lands, so whoever an event wakes finds every record of the batch);
      // a batch that wrote no record announces on its log item.
      const outbox = batch.published.length === 0 ? undefined : outboxOf(batch);
      const carrier: 'run' | 'step' | 'approval' | 'head' | undefined =
        outbox === undefined
          ? undefined
          : images.run !== undefined
            ? 'run'
            : images.steps.length > 0
              ? 'step'
              : images.approvals.length > 0
                ? 'approval'
                : 'head';
      const [approvals, lastApproval] = splitLast(images.approvals, carrier === 'approval');
      const putApproval = async (approval: ApprovalRecord, announcing?: OutboxEntry) => {
        // The run's reference first, as putApproval writes it: a run's approvals are read by their references.
        const ref = itemKeys.approvalRef(runId, approval.approvalId);
        await batchPutItems(ctx, [stringItem({ ...ref, [ENTITY_ATTRIBUTE]: 'approvalRef', stepId: approval.stepId })]);
        await projectWhole(ctx, encodeApproval(approval, ctx.retentionSeconds), version, announcing);
      };
      await forEachInPool(approvals, (approval) => putApproval(approval));
      if (lastApproval !== undefined) await putApproval(lastApproval, outbox);
      const moved = new Set(images.moved);
      const [steps, lastStep] = splitLast(images.steps, carrier === 'step');
      // The batch that starts a run carries its record, and with it where its steps go (written after them).
      ctx.layouts.learn(images.run);
      const shards = images.steps.length === 0 ? 1 : await stepShardsOf(ctx, runId);
      await forEachInPool(steps, (step) => projectStep(ctx, step, version, moved.has(step.stepId), null, shards));
      if (lastStep !== undefined)
        await projectStep(ctx, lastStep, version, moved.has(lastStep.stepId), outbox ?? null, shards);
      if (images.run !== undefined)
        // The run item carries its status index keys and, once ended, its expiry: no write of their own.
        await projectWhole(
          ctx,
          encodeRun(images.run, ctx.retentionSeconds),
          version,
          carrier === 'run' ? outbox : undefined,
        );
      if (carrier === 'head' && outbox !== undefined) await announce(batch, outbox);
    },
  };
}

/** The store's read of runs' step counts, from their heads: one BatchGetItem of the counts alone per 100 runs. */
export function stepCountOperations(ctx: DynamoContext): Pick<Store, 'getStepCounts'> {
  return {
    async getStepCounts(runIds) {
      const heads = await batchGetItems(
        ctx,
        runIds.map((runId) => itemKeys.runHead(runId)),
        [COUNTS_ATTRIBUTE],
      );
      const counts = new Map<string, StepCounts>();
      for (const head of heads) {
        const runId = head.PK?.S?.slice(itemKeys.runPartition('').length);
        const text = head[COUNTS_ATTRIBUTE]?.S;
        if (runId !== undefined && text !== undefined) counts.set(runId, JSON.parse(text) as StepCounts);
      }
      return counts;
    },
  };
}
