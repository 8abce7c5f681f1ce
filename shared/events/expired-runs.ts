/**
 * A run whose item TTL removed, as the table's stream reports it: a REMOVE made by DynamoDB's own service
 * (`userIdentity` Service / dynamodb.amazonaws.com: only TTL deletes as that identity) of an item with the run's sort
 * key, the old image naming the run and its idempotency key. What else the run holds is then deleted after it
 * (shared/adapters/aws/dynamo-retention.ts). The same event source mapping as the outbox delivers these, so the
 * filter is one more pattern of the stream's filter criteria (infra/constructs/outbox.ts).
 */
import { type StreamRecord, stringAttribute } from './outbox.ts';

const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;
const RUN_SORT_KEY = 'RUN';
const RUN_PREFIX = 'RUN#';

/** Lambda filter criteria: run items removed by TTL. */
export const EXPIRED_RUN_STREAM_FILTER = {
  eventName: ['REMOVE'],
  userIdentity: { type: [TTL_IDENTITY.type], principalId: [TTL_IDENTITY.principalId] },
  dynamodb: { Keys: { SK: { S: [RUN_SORT_KEY] } } },
};

export interface ExpiredRun {
  readonly runId: string;
  /** The run's idempotency key (its StartRun's), when it had one: its claim goes too. */
  readonly runKey: string | undefined;
  /** The run's tenant (absent: the default tenant): its run key and watches are that tenant's. */
  readonly tenant: string | undefined;
}

/** The run a stream record says TTL removed, if it says so (never a person's delete, never another item). */
export function expiredRunOf(record: StreamRecord): ExpiredRun | undefined {
  if (record.eventName !== 'REMOVE') return undefined;
  const identity = record.userIdentity;
  if (identity?.type !== TTL_IDENTITY.type || identity.principalId !== TTL_IDENTITY.principalId) return undefined;
  const pk = stringAttribute(record.dynamodb?.Keys, 'PK');
  if (stringAttribute(record.dynamodb?.Keys, 'SK') !== RUN_SORT_KEY || !pk?.startsWith(RUN_PREFIX)) return undefined;
  const image = record.dynamodb?.OldImage;
  return {
    runId: pk.slice(RUN_PREFIX.length),
    runKey: stringAttribute(image, 'idempotencyKey'),
    tenant: stringAttribute(image, 'tenant'),
  };
}
