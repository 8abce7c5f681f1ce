/**
 * The single-table layout of cairn's DynamoDB store. The CDK table (infra) and the embedded stack's dynalite table
 * are both built from these constants, so a deployed table and a local one can never drift apart.
 *
 * Items (PK / SK):
 *   run            RUN#<runId>          / RUN
 *   plan revision  RUN#<runId>          / PLAN#<revision, 6 digits>
 *   step           <step partition>     / STEP#<stepId>      (`attemptRecord`: a first attempt that succeeded it)
 *   attempt        <step partition>     / ATTEMPT#<stepId>#<generation, 4 digits>#<attempt, 3 digits>
 *                  (<step partition>: `RUN#<runId>` for a run whose item names no `stepShards` (up to 256 steps, or
 *                  a run started before step partitions); else `RUN#<runId>#S<shard>`, <shard> = stepShard(stepId,
 *                  stepShards), so a wide layer's step writes and reads spread over that many partition keys)
 *   event          RUN#<runId>          / EVENT#<at>~<announcement id>~<index, 4 digits>   (the audit log)
 *   announcement   RUN#<runId>          / OUTBOX#<id>    (events that belong to no other write: the outbox)
 *   approval       APPROVAL#<id>        / APPROVAL
 *   approval ref   RUN#<runId>          / APPROVALREF#<id>   (written first: a run's approvals, read consistently)
 *   run key        RUNKEY#<key>         / RUNKEY
 *   idempotency    IDEMPOTENCY#<key>    / IDEMPOTENCY
 *   watcher        WATCH#<resourceKey>  / <runId>#<stepId>   (a step watching an outside resource)
 *   admission      ADMISSION#<tenant>   / ADMISSION         (the runs holding one of a tenant's running slots)
 *   queued run     ADMISSION#<tenant>   / QUEUE#<createdAt>#<runId>  (a run waiting for a slot, oldest first)
 *   blob part      BLOB#<sha256>        / PART#<n, 4 digits>  (a large value kept out of line: dynamo-blobs.ts)
 *   a run's part   RUNBLOB#<runId>#<shard> / <sha256>#PART#<n>   (a large value of a run's item: the run's partitions,
 *                  listed and deleted with the run; <shard> from the hash, 0..RUN_BLOB_SHARDS-1, so a run's large
 *                  writes spread over as many partitions)
 * GSI1 (GSI1PK / GSI1SK, projection ALL):
 *   runs, newest first      RUNS#<shard>                 / <createdAt>#<runId>
 *   approvals by status     APPROVALS#<status>#<shard>   / <createdAt>#<approvalId>
 *   (<shard> = a hash of the run or approval id, 0..INDEX_SHARDS-1: a busy stack writes to many index partitions,
 *   not one hot one; a listing reads every shard and merges them in order)
 * GSI_STATUS (GSI_STATUS_PK / GSI_STATUS_SK, projection ALL): `GET /runs?status=`
 *   runs by status, newest first   RUNSTATUS#<status>#<shard>   / <createdAt>#<runId>
 *   (the run item carries both keys, so the projection that writes the run moves its entry: no write of its own;
 *   sorted like GSI1, so one cursor pages both listings)
 * Tenants: a partition that lists or finds things by a name the caller gives (the index partitions above, a run key,
 * a watcher) is the tenant's own, `T#<tenant>#` before the name (`tenantScoped`); the default tenant's keep the
 * names they had before tenants, so a table written before them reads the same. A tenant never contains `#`, and no
 * unscoped name starts with `T#`, so no two tenants' keys meet. Items found by an id cairn made (`RUN#<runId>`,
 * `APPROVAL#<id>`, `PLANJOB#<id>`) keep their keys: the id is unguessable and every read checks the tenant.
 * `expiresAt` (epoch seconds) is the TTL attribute; TTL is enabled on deploy only (dynalite has none: the embedded
 * runtime sweeps, infra/local/retention-sweep.ts). A run's own item carries it once the run has ended; the run's
 * other items go with it (dynamo-retention.ts).
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DEFAULT_TENANT } from '../../config/defaults.ts';

export const PARTITION_KEY = 'PK';
export const SORT_KEY = 'SK';
export const GSI1_NAME = 'GSI1';
export const GSI1_PARTITION_KEY = 'GSI1PK';
export const GSI1_SORT_KEY = 'GSI1SK';
/** The index of runs by status (`GET /runs?status=`). */
export const STATUS_INDEX_NAME = 'GSI_STATUS';
export const STATUS_PARTITION_KEY = 'GSI_STATUS_PK';
export const STATUS_SORT_KEY = 'GSI_STATUS_SK';
/** Epoch seconds; DynamoDB TTL deletes expired idempotency and approval records (deployed tables only). */
export const TTL_ATTRIBUTE = 'expiresAt';

/** Every DynamoDB item is capped at 400 KB; cairn refuses to write more than this so there is room for overhead. */
export const MAX_ITEM_BYTES = 350 * 1024;

export interface ItemKey {
  readonly PK: string;
  readonly SK: string;
}

export interface IndexKey {
  readonly GSI1PK: string;
  readonly GSI1SK: string;
}

export interface StatusIndexKey {
  readonly GSI_STATUS_PK: string;
  readonly GSI_STATUS_SK: string;
}

const pad = (value: number, digits: number): string => String(value).padStart(digits, '0');

export const SORT_PREFIX = {
  plan: 'PLAN#',
  step: 'STEP#',
  attempt: 'ATTEMPT#',
  event: 'EVENT#',
  approvalRef: 'APPROVALREF#',
  queue: 'QUEUE#',
} as const;

const runPartition = (runId: string): string => `RUN#${runId}`;
/** A tenant's admission record and queue: one partition, so the queue is read consistently beside the record. */
const admissionPartition = (tenant: string): string => `ADMISSION#${tenant}`;

/** A partition name of one tenant: the default tenant's is the name itself (as before tenants). */
export const tenantScoped = (tenant: string, name: string): string =>
  tenant === DEFAULT_TENANT ? name : `T#${tenant}#${name}`;

/**
 * Partitions of one run's blob parts. A part can be 300 KB (300 write units) and one partition takes 1,000 units a
 * second: a wide layer of large outputs spreads over these instead of one hot key, and deleting a run's parts stays
 * a handful of queries.
 */
export const RUN_BLOB_SHARDS = 16;
const runBlobPartition = (runId: string, shard: number): string => `RUNBLOB#${runId}#${shard}`;

/**
 * The most partitions a run's steps are spread over (the run's `stepShards`, shared/engine/run/step-partitions.ts, is
 * a power of two up to this): a purge, which no longer knows a run's count, reads them all.
 */
export const MAX_STEP_SHARDS = 16;

/** The partition of a step of a run whose steps are spread over `shards` (1: the run's own partition). */
const stepPartition = (runId: string, stepId: string, shards: number): string =>
  shards <= 1 ? runPartition(runId) : `${runPartition(runId)}#S${fnv1a(stepId) % shards}`;

/** Every partition of a run's steps, over `shards` (1: the run's own partition only). */
const stepPartitions = (runId: string, shards: number): string[] =>
  shards <= 1
    ? [runPartition(runId)]
    : Array.from({ length: shards }, (_, shard) => `${runPartition(runId)}#S${shard}`);

/** The run a run's partition, or one of its step partitions, belongs to (undefined for any other partition). */
export function runIdOfPartition(pk: string): string | undefined {
  if (!pk.startsWith('RUN#')) return undefined;
  const rest = pk.slice('RUN#'.length);
  const shard = /#S\d+$/.exec(rest);
  return shard === null ? rest : rest.slice(0, shard.index);
}

/** Item key builders: the only place that spells a key. */
export const itemKeys = {
  run: (runId: string): ItemKey => ({ PK: runPartition(runId), SK: 'RUN' }),
  /** The run's log head: its last committed batch and its version (shared/adapters/aws/dynamo-run-log.ts). */
  runHead: (runId: string): ItemKey => ({ PK: runPartition(runId), SK: 'HEAD' }),
  runPartition,
  planRevision: (runId: string, revision: number): ItemKey => ({
    PK: runPartition(runId),
    SK: `${SORT_PREFIX.plan}${pad(revision, 6)}`,
  }),
  /** A step's item; `shards`: how many partitions its run's steps are spread over (its run item's `stepShards`). */
  step: (runId: string, stepId: string, shards = 1): ItemKey => ({
    PK: stepPartition(runId, stepId, shards),
    SK: `${SORT_PREFIX.step}${stepId}`,
  }),
  /** An attempt's item: in its step's partition. */
  attempt: (runId: string, stepId: string, generation: number, attempt: number, shards = 1): ItemKey => ({
    PK: stepPartition(runId, stepId, shards),
    SK: `${attemptPrefix(stepId)}${pad(generation, 4)}#${pad(attempt, 3)}`,
  }),
  stepPartitions,
  /** Every partition a run's steps may be in, whatever its count: what a purge reads. */
  anyStepPartitions: (runId: string): string[] => [runPartition(runId), ...stepPartitions(runId, MAX_STEP_SHARDS)],
  event: (runId: string, seq: string): ItemKey => ({ PK: runPartition(runId), SK: `${SORT_PREFIX.event}${seq}` }),
  outbox: (runId: string, id: string): ItemKey => ({ PK: runPartition(runId), SK: `OUTBOX#${id}` }),
  approval: (approvalId: string): ItemKey => ({ PK: `APPROVAL#${approvalId}`, SK: 'APPROVAL' }),
  approvalRef: (runId: string, approvalId: string): ItemKey => ({
    PK: runPartition(runId),
    SK: `${SORT_PREFIX.approvalRef}${approvalId}`,
  }),
  runKey: (tenant: string, key: string): ItemKey => ({ PK: tenantScoped(tenant, `RUNKEY#${key}`), SK: 'RUNKEY' }),
  admission: (tenant: string): ItemKey => ({ PK: admissionPartition(tenant), SK: 'ADMISSION' }),
  admissionPartition,
  queuedRun: (tenant: string, createdAt: string, runId: string): ItemKey => ({
    PK: admissionPartition(tenant),
    SK: `${SORT_PREFIX.queue}${createdAt}#${runId}`,
  }),
  blobPart: (hash: string, part: number): ItemKey => ({ PK: `BLOB#${hash}`, SK: `PART#${pad(part, 4)}` }),
  runBlobPart: (runId: string, hash: string, part: number): ItemKey => ({
    PK: runBlobPartition(runId, Number.parseInt(hash.slice(0, 4), 16) % RUN_BLOB_SHARDS),
    SK: `${hash}#PART#${pad(part, 4)}`,
  }),
  /** Every partition of a run's blob parts. */
  runBlobPartitions: (runId: string): string[] =>
    Array.from({ length: RUN_BLOB_SHARDS }, (_, shard) => runBlobPartition(runId, shard)),
  idempotency: (key: string): ItemKey => ({ PK: `IDEMPOTENCY#${key}`, SK: 'IDEMPOTENCY' }),
  planJob: (jobId: string): ItemKey => ({ PK: `PLANJOB#${jobId}`, SK: 'PLANJOB' }),
  watchPartition: (tenant: string, resourceKey: string): string => tenantScoped(tenant, `WATCH#${resourceKey}`),
  watch: (tenant: string, resourceKey: string, runId: string, stepId: string): ItemKey => ({
    PK: tenantScoped(tenant, `WATCH#${resourceKey}`),
    SK: `${runId}#${stepId}`,
  }),
} as const;

/** `ATTEMPT#<stepId>#`: the trailing `#` keeps step `a` from matching step `a.b` (step ids never contain `#`). */
export function attemptPrefix(stepId?: string): string {
  return stepId === undefined ? SORT_PREFIX.attempt : `${SORT_PREFIX.attempt}${stepId}#`;
}

/**
 * How many partitions each index listing is spread over. One GSI partition takes about 1,000 writes a second, and
 * every write of a run or approval item is also a write of its index entry; sharding keeps busy stacks under that.
 */
export const INDEX_SHARDS = 8;

/** FNV-1a over the id's UTF-16 code units: stable across processes and releases (keys depend on it). */
function fnv1a(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export const indexShard = (id: string): number => fnv1a(id) % INDEX_SHARDS;

const SHARDS = Array.from({ length: INDEX_SHARDS }, (_, shard) => shard);

/** Every index listing is one tenant's: its partitions carry the tenant (`tenantScoped`), so no listing reads another's. */
export const indexKeys = {
  runPartition: (tenant: string, shard: number): string => tenantScoped(tenant, `RUNS#${shard}`),
  /** Every partition of a tenant's runs listing. */
  runPartitions: (tenant: string): string[] => SHARDS.map((shard) => indexKeys.runPartition(tenant, shard)),
  run: (tenant: string, createdAt: string, runId: string): IndexKey => ({
    GSI1PK: indexKeys.runPartition(tenant, indexShard(runId)),
    GSI1SK: `${createdAt}#${runId}`,
  }),
  runStatusPartition: (tenant: string, status: string, shard: number): string =>
    tenantScoped(tenant, `RUNSTATUS#${status}#${shard}`),
  /** Every partition of the listing of a tenant's runs in one status (GSI_STATUS). */
  runStatusPartitions: (tenant: string, status: string): string[] =>
    SHARDS.map((shard) => indexKeys.runStatusPartition(tenant, status, shard)),
  runByStatus: (tenant: string, status: string, createdAt: string, runId: string): StatusIndexKey => ({
    GSI_STATUS_PK: indexKeys.runStatusPartition(tenant, status, indexShard(runId)),
    GSI_STATUS_SK: `${createdAt}#${runId}`,
  }),
  approvalPartition: (tenant: string, status: string, approvalId: string): string =>
    tenantScoped(tenant, `APPROVALS#${status}#${indexShard(approvalId)}`),
  /** Every partition of a tenant's approvals listing of one status. */
  approvalPartitions: (tenant: string, status: string): string[] =>
    SHARDS.map((shard) => tenantScoped(tenant, `APPROVALS#${status}#${shard}`)),
  approval: (tenant: string, status: string, createdAt: string, approvalId: string): IndexKey => ({
    GSI1PK: indexKeys.approvalPartition(tenant, status, approvalId),
    GSI1SK: `${createdAt}#${approvalId}`,
  }),
} as const;

/** The CreateTable input for cairn's table: on-demand, string keys, two GSIs projecting everything. */
export function tableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: SORT_KEY, AttributeType: 'S' },
      { AttributeName: GSI1_PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: GSI1_SORT_KEY, AttributeType: 'S' },
      { AttributeName: STATUS_PARTITION_KEY, AttributeType: 'S' },
      { AttributeName: STATUS_SORT_KEY, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: GSI1_NAME,
        KeySchema: [
          { AttributeName: GSI1_PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: GSI1_SORT_KEY, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: STATUS_INDEX_NAME,
        KeySchema: [
          { AttributeName: STATUS_PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: STATUS_SORT_KEY, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
}
