/**
 * `store.write` and `store.read`: faults on the embedded stack's DynamoDB client, around each command the store adapter
 * sends (outside the SDK's own retries: what is injected is what reaches the adapter once the SDK gave up, as on AWS
 * after its attempts). `throttle` refuses the call before it reaches the table; `timeout` is a call without an answer,
 * which went either way (seeded): not made, or made and its answer lost. A write whose answer is lost still reaches
 * the table's change stream, as DynamoDB Streams would deliver it, so its announcements are relayed.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OUTBOX_ATTRIBUTE, type StreamRecord } from '../../../shared/events/outbox.ts';
import { dynamoThrottle, networkTimeout } from './aws-errors.ts';
import type { FaultInjector } from './injector.ts';

const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);
const READS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
]);

export const pointOfCommand = (command: string): 'store.write' | 'store.read' | undefined =>
  WRITES.has(command) ? 'store.write' : READS.has(command) ? 'store.read' : undefined;

type Image = Readonly<Record<string, unknown>>;
interface WriteInput {
  readonly Item?: Image;
  readonly ExpressionAttributeNames?: Readonly<Record<string, string>>;
}

/**
 * The change-stream record of a write that landed, as the store adapter hands it over on success
 * (shared/adapters/aws/dynamo-ops.ts): a put that carries an outbox, an update that set one (ALL_NEW image).
 */
export function streamRecordOf(command: string, input: WriteInput, output: unknown): StreamRecord | undefined {
  if (command === 'PutItemCommand' && input.Item?.[OUTBOX_ATTRIBUTE] !== undefined)
    return { eventName: 'INSERT', dynamodb: { NewImage: input.Item } };
  if (command !== 'UpdateItemCommand') return undefined;
  const attributes = (output as { Attributes?: Image } | undefined)?.Attributes;
  const setsOutbox = Object.values(input.ExpressionAttributeNames ?? {}).includes(OUTBOX_ATTRIBUTE);
  if (!setsOutbox || attributes?.[OUTBOX_ATTRIBUTE] === undefined) return undefined;
  return { eventName: 'MODIFY', dynamodb: { NewImage: attributes } };
}

export interface StoreFaultsOptions {
  /** The table's change stream (the stack's outbox stream): what a write whose answer was lost still delivers. */
  readonly stream?: (record: StreamRecord) => void;
}

/** Adds the store's fault points to the client's middleware (only when the spec names one of them). */
export function injectStoreFaults(
  client: DynamoDBClient,
  faults: FaultInjector,
  options: StoreFaultsOptions = {},
): void {
  if (!faults.covers('store.write') && !faults.covers('store.read')) return;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const point = pointOfCommand(command);
      const rule = point === undefined ? undefined : faults.draw(point);
      if (point === undefined || rule === undefined) return next(args);
      if (rule.fault === 'throttle') throw dynamoThrottle(command, faults.detail(point));
      // timeout: the request may have reached the table or not, and the caller cannot tell which.
      if (faults.detail(point) < 0.5) throw networkTimeout(command);
      const result = await next(args);
      const record = streamRecordOf(command, args.input as WriteInput, result.output);
      if (record) options.stream?.(record);
      throw networkTimeout(command);
    },
    { step: 'initialize', name: 'cairnStoreFaults', priority: 'high' },
  );
}
