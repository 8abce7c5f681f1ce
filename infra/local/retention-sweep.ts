/**
 * The embedded runtime's stand-in for DynamoDB's TTL. dynalite expires nothing, so every so often the runtime sweeps
 * the table: each item whose `expiresAt` is past is deleted if it still is (as TTL checks again before it deletes: a
 * run that reopened meanwhile lost its expiry), and each run item among them is followed by the rest of its run,
 * through the same `purgeRun` the deployed stream calls (shared/adapters/aws/dynamo-retention.ts). One sweep at a
 * time; a failed one is reported and the next comes at its time, as TTL's own deletions come late rather than never.
 *
 * A Scan of the whole table: fine for the embedded store, and the reason the deployed stack leaves this to TTL.
 */
import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ExpressionScope } from '../../shared/adapters/aws/dynamo-expressions.ts';
import { runLayoutsOf } from '../../shared/adapters/aws/dynamo-layouts.ts';
import { conditionalDelete, type DynamoContext } from '../../shared/adapters/aws/dynamo-ops.ts';
import { PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE } from '../../shared/adapters/aws/table-layout.ts';
import type { Retention } from '../../shared/ports/retention.ts';

/** How often the embedded runtime sweeps: TTL deletes within days of the expiry, an hour is closer than that. */
export const LOCAL_RETENTION_SWEEP_MS = 60 * 60 * 1000;

const RUN_SORT_KEY = 'RUN';
const RUN_PREFIX = 'RUN#';

export interface SweepReport {
  /** Items whose expiry had passed, deleted (as TTL deletes them). */
  readonly expired: number;
  /** Runs among them whose remaining records were deleted. */
  readonly runs: number;
}

export interface SweepTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly retention: Pick<Retention, 'purgeRun'>;
}

/** Deletes every item whose expiry is before `at` and purges the runs among them. */
export async function sweepExpired(table: SweepTable, at: Date): Promise<SweepReport> {
  const now = { N: String(Math.floor(at.getTime() / 1000)) };
  const ctx: DynamoContext = {
    client: table.client,
    tableName: table.tableName,
    now: () => at,
    layouts: runLayoutsOf(table.client, table.tableName),
  };
  let expired = 0;
  let runs = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const scope = new ExpressionScope();
    const filter = scope.lessThan(TTL_ATTRIBUTE, now, 'now');
    const projection = [PARTITION_KEY, SORT_KEY, 'idempotencyKey', 'tenant'].map((name) => scope.name(name)).join(', ');
    const page = await table.client.send(
      new ScanCommand({
        TableName: table.tableName,
        FilterExpression: filter,
        ProjectionExpression: projection,
        ...scope.parts(),
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    for (const item of page.Items ?? []) {
      const key = { PK: item[PARTITION_KEY]?.S ?? '', SK: item[SORT_KEY]?.S ?? '' };
      const still = new ExpressionScope();
      if (!(await conditionalDelete(ctx, key, still, still.lessThan(TTL_ATTRIBUTE, now, 'now')))) continue;
      expired += 1;
      if (key.SK !== RUN_SORT_KEY || !key.PK.startsWith(RUN_PREFIX)) continue;
      await table.retention.purgeRun(key.PK.slice(RUN_PREFIX.length), item.idempotencyKey?.S, item.tenant?.S);
      runs += 1;
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return { expired, runs };
}

export interface RetentionSweepOptions extends SweepTable {
  readonly clock: () => Date;
  readonly intervalMs?: number;
  readonly onError: (error: unknown) => void;
}

export interface RetentionSweep {
  /** Sweeps now (a sweep under way is waited for instead of a second one). */
  sweepNow(): Promise<SweepReport>;
  close(): void;
}

/** Sweeps every `intervalMs` (default hourly) until closed; the timer never keeps the process alive on its own. */
export function startRetentionSweep(options: RetentionSweepOptions): RetentionSweep {
  let running: Promise<SweepReport> | undefined;
  const sweepNow = (): Promise<SweepReport> => {
    running ??= sweepExpired(options, options.clock()).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    sweepNow().catch(options.onError);
  }, options.intervalMs ?? LOCAL_RETENTION_SWEEP_MS);
  timer.unref();
  return { sweepNow, close: () => clearInterval(timer) };
}
