/**
 * The embedded stack's counters, in the units AWS bills (`bench:engine`'s `step-units`): state transitions, Lambda
 * invocations and DynamoDB requests, counted only when the stack is started with `instrument`, so that a stack that
 * does not count adds nothing to the store's or the machines' paths.
 */

import { utf8Bytes } from '../../../shared/events/put-events.ts';
import type { BatchHandler, Mailbox } from '../../../shared/ports/mailbox.ts';
import type { Store } from '../../../shared/ports/store.ts';

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
  /** Bytes of the items those reads returned, sized as DynamoDB sizes items (what read units are billed by). */
  readonly dynamoReadBytes: number;
  /**
   * Plan revisions asked of the store (`getPlanRevision`), answered from its cache or not: in one process a revision
   * read once is kept, but on AWS each cold container of a step would read it from the table.
   */
  readonly planReads: number;
  /** Commands handed to a run's mailbox (deployed: one SQS SendMessage each). */
  readonly mailboxSends: number;
  /** Batches the runs' deciders took from their mailboxes (deployed: SQS receives, one decider invocation each). */
  readonly mailboxBatches: number;
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

type AttributeValue = Readonly<Record<string, unknown>>;

/** An attribute value's size as DynamoDB counts it (names and values in UTF-8, numbers about a byte per 2 digits). */
function valueBytes(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return utf8Bytes(String(v));
    case 'N':
      return Math.ceil(String(v).replace(/^-|\.|e.*$/gi, '').length / 2) + 1;
    case 'B':
      return (v as Uint8Array).byteLength;
    case 'SS':
      return (v as string[]).reduce((sum, x) => sum + utf8Bytes(x), 0);
    case 'NS':
      return (v as string[]).reduce((sum, x) => sum + Math.ceil(x.length / 2) + 1, 0);
    case 'BS':
      return (v as Uint8Array[]).reduce((sum, x) => sum + x.byteLength, 0);
    case 'M':
      return 3 + itemBytes(v as Record<string, AttributeValue>);
    case 'L':
      return 3 + (v as AttributeValue[]).reduce((sum, x) => sum + 1 + valueBytes(x), 0);
    default:
      return 1;
  }
}

/** An item's size as DynamoDB counts it against read and write units. */
export function itemBytes(item: Readonly<Record<string, AttributeValue>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += utf8Bytes(name) + valueBytes(value);
  return bytes;
}

/** The items a read returned. */
function itemsReturned(command: string, output: unknown): Readonly<Record<string, AttributeValue>>[] {
  const out = output as {
    Item?: Record<string, AttributeValue>;
    Items?: Record<string, AttributeValue>[];
    Responses?: Record<string, Record<string, AttributeValue>[]>;
  } | null;
  if (out === null || out === undefined) return [];
  if (command === 'GetItemCommand') return out.Item === undefined ? [] : [out.Item];
  if (command === 'BatchGetItemCommand') return Object.values(out.Responses ?? {}).flat();
  return out.Items ?? [];
}

/**
 * The keys (`PK` and `SK`) a write command wrote, from its input: a test's spy on what one batch, or one run,
 * rewrites (a join's item, the partitions a layer's steps land in).
 */
export function writtenKeys(command: string, input: unknown): { readonly PK: string; readonly SK: string }[] {
  const keyOf = (item: Readonly<Record<string, AttributeValue>> | undefined) => ({
    PK: String(item?.PK?.S ?? ''),
    SK: String(item?.SK?.S ?? ''),
  });
  const one = input as { Item?: Record<string, AttributeValue>; Key?: Record<string, AttributeValue> };
  if (command === 'PutItemCommand') return [keyOf(one.Item)];
  if (command === 'UpdateItemCommand' || command === 'DeleteItemCommand') return [keyOf(one.Key)];
  if (command !== 'BatchWriteItemCommand') return [];
  const tables = (
    input as { RequestItems?: Record<string, { PutRequest?: { Item?: Record<string, AttributeValue> } }[]> }
  ).RequestItems;
  return Object.values(tables ?? {}).flatMap((requests) =>
    requests.flatMap((request) => (request.PutRequest === undefined ? [] : [keyOf(request.PutRequest.Item)])),
  );
}

export interface StackCounters {
  /** The in-process DynamoDB's command hook; absent when not counting. */
  readonly onCommand?: (command: string, input: unknown, output: unknown) => void;
  /** The executions' state hook; absent when not counting. */
  readonly onStateEntered?: () => void;
  /** A Lambda invocation of the function `key` (nothing when not counting). */
  invoked(key: string): void;
  /** The store, its plan revision lookups counted (itself when not counting). */
  counted(store: Store): Store;
  /** The mailbox, its sends counted (itself when not counting). */
  sending<M extends Mailbox>(mailbox: M): M;
  /** The deciders' batch handler, its batches counted (itself when not counting). */
  batching(handle: BatchHandler['handle']): BatchHandler['handle'];
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
    dynamoReadBytes: 0,
    planReads: 0,
    mailboxSends: 0,
    mailboxBatches: 0,
    lambda: {} as Record<string, number>,
  };
  const stats = (): LocalStackStats => ({
    stateTransitions: counts.stateTransitions,
    lambdaInvocations: { ...counts.lambda },
    dynamoWrites: counts.dynamoWrites,
    auditWrites: counts.auditWrites,
    dynamoReads: counts.dynamoReads,
    dynamoReadItems: counts.dynamoReadItems,
    dynamoReadBytes: counts.dynamoReadBytes,
    planReads: counts.planReads,
    mailboxSends: counts.mailboxSends,
    mailboxBatches: counts.mailboxBatches,
  });
  if (!instrument)
    return { invoked: () => {}, counted: (store) => store, sending: (box) => box, batching: (h) => h, stats };
  return {
    onCommand: (command, input, output) => {
      if (DYNAMO_WRITES.has(command)) counts.dynamoWrites += 1;
      if (AUDIT_WRITES.has(command)) counts.auditWrites += 1;
      if (DYNAMO_READS.has(command)) {
        counts.dynamoReads += 1;
        counts.dynamoReadItems += itemsRead(command, input, output);
        for (const item of itemsReturned(command, output)) counts.dynamoReadBytes += itemBytes(item);
      }
    },
    onStateEntered: () => {
      counts.stateTransitions += 1;
    },
    invoked: (key) => {
      counts.lambda[key] = (counts.lambda[key] ?? 0) + 1;
    },
    counted: (store) => ({
      ...store,
      getPlanRevision: (runId, revision) => {
        counts.planReads += 1;
        return store.getPlanRevision(runId, revision);
      },
    }),
    sending: (mailbox) => ({
      ...mailbox,
      send: (runId, command) => {
        counts.mailboxSends += 1;
        return mailbox.send(runId, command);
      },
      ask: (runId, command, options) => {
        counts.mailboxSends += 1;
        return mailbox.ask(runId, command, options);
      },
    }),
    batching: (handle) => (runId, commands) => {
      counts.mailboxBatches += 1;
      return handle(runId, commands);
    },
    stats,
  };
}
