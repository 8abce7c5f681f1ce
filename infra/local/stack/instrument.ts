/**
 * The embedded stack's counters, in the units AWS bills (`bench:engine`'s `step-units`): state transitions, Lambda
 * invocations and DynamoDB requests, counted only when the stack is started with `instrument`, so that a stack that
 * does not count adds nothing to the store's or the machines' paths.
 */

/** What a workload cost, in the units AWS bills: counted while `instrument` is on. */
export interface LocalStackStats {
  readonly stateTransitions: number;
  readonly lambdaInvocations: Readonly<Record<string, number>>;
  readonly dynamoWrites: number;
  /** The outbox relay's audit-log batches (BatchWriteItem), apart from the state writes above. */
  readonly auditWrites: number;
  readonly dynamoReads: number;
  /** Items those reads returned or asked for (a BatchGetItem of three keys is one read of three items). */
  readonly dynamoReadItems: number;
}

const DYNAMO_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);
/** Only the outbox relay writes in batches (the audit log): counted apart, off every step's own path. */
const AUDIT_WRITES = new Set(['BatchWriteItemCommand']);
const DYNAMO_READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

/** How many items a read command asked for (batch) or returned (query, scan): what AWS bills reads by, roughly. */
function itemsRead(command: string, input: unknown, output: unknown): number {
  if (command === 'GetItemCommand') return 1;
  if (command === 'BatchGetItemCommand') {
    const tables = Object.values((input as { RequestItems?: Record<string, { Keys?: unknown[] }> }).RequestItems ?? {});
    return tables.reduce((sum, table) => sum + (table.Keys?.length ?? 0), 0);
  }
  return (output as { Count?: number } | undefined)?.Count ?? 0;
}

export interface StackCounters {
  /** The in-process DynamoDB's command hook; absent when not counting. */
  readonly onCommand?: (command: string, input: unknown, output: unknown) => void;
  /** The executions' state hook; absent when not counting. */
  readonly onStateEntered?: () => void;
  /** A Lambda invocation of the function `key` (nothing when not counting). */
  invoked(key: string): void;
  /** Counts since boot (all zero when not counting). */
  stats(): LocalStackStats;
}

export function stackCounters(instrument: boolean): StackCounters {
  const counts = {
    stateTransitions: 0,
    dynamoWrites: 0,
    auditWrites: 0,
    dynamoReads: 0,
    dynamoReadItems: 0,
    lambda: {} as Record<string, number>,
  };
  const stats = (): LocalStackStats => ({
    stateTransitions: counts.stateTransitions,
    lambdaInvocations: { ...counts.lambda },
    dynamoWrites: counts.dynamoWrites,
    auditWrites: counts.auditWrites,
    dynamoReads: counts.dynamoReads,
    dynamoReadItems: counts.dynamoReadItems,
  });
  if (!instrument) return { invoked: () => {}, stats };
  return {
    onCommand: (command, input, output) => {
      if (DYNAMO_WRITES.has(command)) counts.dynamoWrites += 1;
      if (AUDIT_WRITES.has(command)) counts.auditWrites += 1;
      if (DYNAMO_READS.has(command)) {
        counts.dynamoReads += 1;
        counts.dynamoReadItems += itemsRead(command, input, output);
      }
    },
    onStateEntered: () => {
      counts.stateTransitions += 1;
    },
    invoked: (key) => {
      counts.lambda[key] = (counts.lambda[key] ?? 0) + 1;
    },
    stats,
  };
}
