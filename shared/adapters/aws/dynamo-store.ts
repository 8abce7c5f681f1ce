/**
 * The Store port on DynamoDB (single table, see table-layout.ts). The embedded stack runs the same adapter against
 * dynalite. Every write is a single-item conditional write: no transactions (dynalite has none, and one-item
 * conditions are cheaper); a lost condition comes back as `undefined` / `false` or a ConflictError, as the port says.
 */

import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETENTION_DAYS } from '../../config/defaults.ts';
import type { Retention } from '../../ports/retention.ts';
import type { RunLog } from '../../ports/run-log.ts';
import type { Store } from '../../ports/store.ts';
import { admissionOperations } from './dynamo-admission.ts';
import { approvalOperations } from './dynamo-approvals.ts';
import { eventOperations } from './dynamo-events.ts';
import { runLayoutsOf } from './dynamo-layouts.ts';
import type { DynamoContext } from './dynamo-ops.ts';
import { planJobOperations } from './dynamo-plan-jobs.ts';
import { createDynamoRetention } from './dynamo-retention.ts';
import { createDynamoRunLog, stepCountOperations } from './dynamo-run-log.ts';
import { runOperations } from './dynamo-runs.ts';
import { stepOperations } from './dynamo-steps.ts';
import { watchOperations } from './dynamo-watches.ts';

export interface DynamoStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Clock for the timestamps the store writes itself (`updatedAt`, `createdAt` of plan revisions and run keys). */
  readonly now?: () => Date;
  /** The embedded stack's change stream (see DynamoContext.stream); absent when deployed. */
  readonly stream?: DynamoContext['stream'];
  /** How long an ended run's records are kept (DynamoContext.retentionSeconds). */
  readonly retentionSeconds?: number;
}

function contextOf(options: DynamoStoreOptions): DynamoContext {
  return {
    client: options.client,
    tableName: options.tableName,
    now: options.now ?? (() => new Date()),
    stream: options.stream,
    retentionSeconds: options.retentionSeconds ?? DEFAULT_RETENTION_DAYS * 24 * 3600,
    layouts: runLayoutsOf(options.client, options.tableName),
  };
}

export function createDynamoStore(options: DynamoStoreOptions): Store {
  const ctx = contextOf(options);
  return {
    ...runOperations(ctx),
    ...eventOperations(ctx),
    ...stepOperations(ctx),
    ...approvalOperations(ctx),
    ...watchOperations(ctx),
    ...planJobOperations(ctx),
    ...stepCountOperations(ctx),
    ...admissionOperations(ctx),
  };
}

/** Retention on the same table (shared/ports/retention.ts). */
export function createDynamoRetentionOf(options: DynamoStoreOptions): Retention {
  return createDynamoRetention(contextOf(options));
}

/** The run log on the same table (shared/ports/run-log.ts), projecting through the same store. */
export function createDynamoRunLogOf(options: DynamoStoreOptions, store: Store): RunLog {
  return createDynamoRunLog(contextOf(options), store);
}
