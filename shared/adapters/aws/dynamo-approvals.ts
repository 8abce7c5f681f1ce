/**
 * Human approvals and the idempotency records of side-effecting capability calls, on DynamoDB.
 *
 * Idempotency follows Powertools' DynamoDB persistence layer: one item per key; `in_progress` with an expiry while
 * a caller acts, `completed` with the result afterwards; the put that starts a call succeeds only when no record
 * exists or the existing one has expired (an expired `in_progress` means its owner died: the key may be taken over).
 */

import { randomUUID } from 'node:crypto';
import { DEFAULT_TENANT } from '../../config/defaults.ts';
import { ConflictError } from '../../errors.ts';
import type { ApprovalPosition, ApprovalRecord, IdempotencyRecord, Store } from '../../ports/store.ts';
import type { Item } from './dynamo-attributes.ts';
import {
  APPROVAL_STATUSES,
  decodeApproval,
  decodeIdempotency,
  ENTITY_ATTRIBUTE,
  encodeApproval,
  stringItem,
} from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import {
  batchGetItems,
  batchPutItems,
  conditionalDelete,
  conditionalPut,
  type DynamoContext,
  getItem,
  outboxAttribute,
  type QueryInput,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import {
  GSI1_NAME,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  indexKeys,
  itemKeys,
  PARTITION_KEY,
  SORT_KEY,
  SORT_PREFIX,
  TTL_ATTRIBUTE,
} from './table-layout.ts';

type ApprovalOperations = Pick<
  Store,
  | 'putApproval'
  | 'getApproval'
  | 'listApprovals'
  | 'listRunApprovals'
  | 'beginIdempotent'
  | 'completeIdempotent'
  | 'abortIdempotent'
>;

/** A begin that loses to a record which then disappears (aborted in between) tries again this many times. */
const BEGIN_ATTEMPTS = 3;
/**
 * Who wrote an in-progress record: a nonce of one `beginIdempotent` call. A begin whose write landed but whose
 * answer was lost (a timeout; or the SDK's own retry of it, which then loses the condition) finds its own record by
 * this, instead of taking it for another caller's call in progress.
 */
const OWNER_ATTRIBUTE = 'owner';
/** Reads of a record whose write lost its answer, before the write's error stands. */
const READ_BACK_ATTEMPTS = 3;

const IN_PROGRESS = { S: 'in_progress' } as const;

function idempotencyItem(key: string, status: IdempotencyRecord['status'], expiresAt: number): Item {
  return {
    ...stringItem({ ...itemKeys.idempotency(key), [ENTITY_ATTRIBUTE]: 'idempotency', key, status }),
    [TTL_ATTRIBUTE]: { N: String(expiresAt) },
  };
}

/**
 * The references of a run's approvals (small items of the run's partition, read consistently); with `stepId`, only
 * that step's, and references written before they named their step, which the caller filters once read in full.
 */
function approvalRefsQuery(runId: string, stepId: string | undefined): QueryInput {
  const query = runItemsQuery(runId, SORT_PREFIX.approvalRef);
  if (stepId === undefined) return query;
  const scope = new ExpressionScope();
  const filter = scope.or(scope.equals('stepId', { S: stepId }, 'stepId'), scope.notExists('stepId'));
  const parts = scope.parts();
  return {
    ...query,
    FilterExpression: filter,
    ExpressionAttributeNames: { ...query.ExpressionAttributeNames, ...parts.ExpressionAttributeNames },
    ExpressionAttributeValues: { ...query.ExpressionAttributeValues, ...parts.ExpressionAttributeValues },
  };
}

export function approvalOperations(ctx: DynamoContext): ApprovalOperations {
  const listApprovals = async (
    options: {
      tenant?: string;
      status?: ApprovalRecord['status'];
      runId?: string;
      limit?: number;
      after?: ApprovalPosition;
    } = {},
  ): Promise<ApprovalRecord[]> => {
    const tenant = options.tenant ?? DEFAULT_TENANT;
    const statuses = options.status === undefined ? APPROVAL_STATUSES : [options.status];
    const { after, limit } = options;
    const partitions = statuses.flatMap((status) =>
      indexKeys.approvalPartitions(tenant, status).map((partition) => ({ status, partition })),
    );
    const pages = await Promise.all(
      partitions.map(({ partition }) => {
        const scope = new ExpressionScope();
        const key = scope.equals(GSI1_PARTITION_KEY, { S: partition }, 'partition');
        // Sort keys are createdAt#approvalId in every partition: the cursor's own sort key bounds each of them.
        const from = after === undefined ? undefined : `${after.createdAt}#${after.approvalId}`;
        const range = from === undefined ? key : `${key} AND ${scope.greaterThan(GSI1_SORT_KEY, { S: from }, 'after')}`;
        const filter = options.runId === undefined ? undefined : scope.equals('runId', { S: options.runId });
        return queryAll(
          ctx,
          {
            IndexName: GSI1_NAME,
            KeyConditionExpression: range,
            // With a filter, Limit would count items before filtering; let pages be full and stop at `limit`.
            ...(filter === undefined ? (limit === undefined ? {} : { Limit: limit }) : { FilterExpression: filter }),
            ...scope.parts(),
          },
          limit,
        );
      }),
    );
    // Oldest first: the queue a person works through.
    const sorted = pages
      .flat()
      .map(decodeApproval)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
    return limit === undefined ? sorted : sorted.slice(0, limit);
  };

  /** The record as it stands after a write without an answer (`item` undefined: none); undefined when unreadable. */
  const readBack = async (key: string): Promise<{ item: Item | undefined } | undefined> => {
    for (let attempt = 0; attempt < READ_BACK_ATTEMPTS; attempt++) {
      try {
        return { item: await getItem(ctx, itemKeys.idempotency(key)) };
      } catch {
        // A read that failed too: read again, the write's own error stands after the last one.
      }
    }
    return undefined;
  };

  /** Deletes an in-progress record this begin wrote (its owner nonce), and nothing else. */
  const dropOwn = async (key: string, owner: string): Promise<void> => {
    const scope = new ExpressionScope();
    const condition = scope.and(
      scope.equals('status', IN_PROGRESS, 'inProgress'),
      scope.equals(OWNER_ATTRIBUTE, { S: owner }, 'owner'),
    );
    await conditionalDelete(ctx, itemKeys.idempotency(key), scope, condition);
  };

  const beginIdempotent = async (
    key: string,
    expiresAt: number,
    now: number,
  ): Promise<IdempotencyRecord | undefined> => {
    const owner = randomUUID();
    for (let attempt = 0; attempt < BEGIN_ATTEMPTS; attempt++) {
      const scope = new ExpressionScope();
      const condition = scope.or(
        scope.notExists(PARTITION_KEY),
        scope.lessThan(TTL_ATTRIBUTE, { N: String(now) }, 'now'),
      );
      const item = { ...idempotencyItem(key, 'in_progress', expiresAt), [OWNER_ATTRIBUTE]: { S: owner } };
      let began: boolean;
      try {
        began = await conditionalPut(ctx, item, scope, condition);
      } catch (error) {
        // No answer: the record may be there all the same. Ours → this caller holds the key; else the error stands.
        const landed = await readBack(key);
        if (landed?.item?.[OWNER_ATTRIBUTE]?.S === owner) return undefined;
        // Unread, it may be ours: taken back (only if it is), or the caller's retry would find a record in progress
        // that nobody finishes, and wait on it until it expires.
        if (landed === undefined) await dropOwn(key, owner).catch(() => undefined);
        throw error;
      }
      if (began) return undefined;
      // dynalite returns no item on a lost condition: read the holder's record (consistently) instead.
      const existing = await getItem(ctx, itemKeys.idempotency(key));
      if (existing?.[OWNER_ATTRIBUTE]?.S === owner) return undefined;
      if (existing !== undefined) return decodeIdempotency(existing);
    }
    throw new ConflictError(`idempotency key ${key} keeps changing hands`, { context: { key }, retryable: true });
  };

  return {
    async putApproval(approval, announce) {
      // The run's reference first: whoever closes the run finds the approval by a consistent read of the run's
      // partition, never by the eventually consistent index. A reference without its approval (a crash between the
      // two writes) reads as nothing.
      const ref = itemKeys.approvalRef(approval.runId, approval.approvalId);
      // The step on the reference: a step's approvals are found without reading the run's others in full.
      await batchPutItems(ctx, [stringItem({ ...ref, [ENTITY_ATTRIBUTE]: 'approvalRef', stepId: approval.stepId })]);
      const scope = new ExpressionScope();
      const item = { ...encodeApproval(approval, ctx.retentionSeconds), ...outboxAttribute(announce) };
      return conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY));
    },
    async listRunApprovals(runId, options = {}) {
      const { stepId } = options;
      const refs = await queryAll(ctx, approvalRefsQuery(runId, stepId));
      const ids = refs.flatMap((ref) => ref[SORT_KEY]?.S?.slice(SORT_PREFIX.approvalRef.length) ?? []);
      const items = await batchGetItems(ctx, ids.map(itemKeys.approval));
      return items
        .map(decodeApproval)
        .filter((approval) => stepId === undefined || approval.stepId === stepId)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
    },
    async getApproval(approvalId) {
      const item = await getItem(ctx, itemKeys.approval(approvalId));
      return item === undefined ? undefined : decodeApproval(item);
    },
    listApprovals,
    beginIdempotent,
    async completeIdempotent(key, result, expiresAt) {
      const scope = new ExpressionScope();
      const item: Item = idempotencyItem(key, 'completed', expiresAt);
      if (result !== undefined) item.result = { S: JSON.stringify(result) };
      // The first completion is the recorded result; a late duplicate (after an expiry takeover) does not replace it.
      const condition = scope.or(scope.notExists(PARTITION_KEY), scope.equals('status', IN_PROGRESS, 'inProgress'));
      await conditionalPut(ctx, item, scope, condition);
    },
    async abortIdempotent(key) {
      const scope = new ExpressionScope();
      // Only an in-progress record is dropped: a completed result must survive a late abort.
      await conditionalDelete(ctx, itemKeys.idempotency(key), scope, scope.equals('status', IN_PROGRESS, 'inProgress'));
    },
  };
}
