/**
 * `index.read:lag`: eventually consistent reads (a Query on the global secondary index, or any read without
 * ConsistentRead) return a stale view, as DynamoDB's may for a moment after a write. A read hit by the fault gets the
 * answer the same read got less than the lag ago, if there was one (items since written missing, items since removed
 * or changed as they were); else today's answer without the items written within the lag (not yet propagated). The
 * second is the cruder view: an item changed within the lag drops out instead of showing its older version.
 * Strongly consistent reads are never stale.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { FaultInjector } from './injector.ts';

type Item = Readonly<Record<string, { readonly S?: string } | undefined>>;
interface ReadInput {
  readonly IndexName?: string;
  readonly ConsistentRead?: boolean;
  readonly Item?: Item;
  readonly Key?: Item;
  readonly RequestItems?: Readonly<Record<string, unknown>>;
}

const EVENTUAL_READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand']);
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);
/** Answers kept to be served again stale (the oldest go first). */
const KEPT_ANSWERS = 500;
/** Write times kept per item key, pruned once there are this many. */
const KEPT_WRITES = 20_000;

const keyOf = (item: Item | undefined): string | undefined =>
  item?.PK?.S === undefined ? undefined : `${item.PK.S}\u0000${item.SK?.S ?? ''}`;

/** The keys of the items a write touched. */
function writtenKeys(command: string, input: ReadInput): string[] {
  if (command === 'PutItemCommand') return [keyOf(input.Item)].filter((k): k is string => k !== undefined);
  if (command !== 'BatchWriteItemCommand') return [keyOf(input.Key)].filter((k): k is string => k !== undefined);
  const requests = Object.values(input.RequestItems ?? {}).flat() as {
    PutRequest?: { Item?: Item };
    DeleteRequest?: { Key?: Item };
  }[];
  return requests
    .map((request) => keyOf(request.PutRequest?.Item ?? request.DeleteRequest?.Key))
    .filter((k): k is string => k !== undefined);
}

const isEventual = (command: string, input: ReadInput): boolean =>
  EVENTUAL_READS.has(command) && (input.IndexName !== undefined || input.ConsistentRead !== true);

export function injectIndexLag(client: DynamoDBClient, faults: FaultInjector, now: () => number = Date.now): void {
  if (!faults.covers('index.read')) return;
  const writtenAt = new Map<string, number>();
  const answers = new Map<string, { at: number; output: unknown }>();
  let maxLag = 0;

  const recent = (item: Item, since: number): boolean => (writtenAt.get(keyOf(item) ?? '') ?? -1) >= since;

  /** Today's answer without the items written since `since`. */
  const withoutRecent = (output: Record<string, unknown>, since: number): unknown => {
    if (Array.isArray(output.Items)) {
      const items = (output.Items as Item[]).filter((item) => !recent(item, since));
      return { ...output, Items: items, Count: items.length };
    }
    if (output.Item !== undefined && recent(output.Item as Item, since)) {
      const { Item: _item, ...rest } = output;
      return rest;
    }
    return output;
  };

  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const input = args.input as ReadInput;
      if (WRITES.has(command)) {
        const result = await next(args);
        const at = now();
        if (writtenAt.size > KEPT_WRITES)
          for (const [key, time] of writtenAt) if (time < at - maxLag) writtenAt.delete(key);
        for (const key of writtenKeys(command, input)) writtenAt.set(key, at);
        return result;
      }
      if (!isEventual(command, input)) return next(args);
      const rule = faults.draw('index.read');
      const asked = `${command} ${JSON.stringify(input)}`;
      const lag = rule?.durationMs ?? 0;
      maxLag = Math.max(maxLag, lag);
      const earlier = answers.get(asked);
      if (rule !== undefined && earlier !== undefined && earlier.at >= now() - lag)
        return { output: earlier.output, response: {} } as Awaited<ReturnType<typeof next>>;
      const result = await next(args);
      answers.delete(asked);
      answers.set(asked, { at: now(), output: result.output });
      if (answers.size > KEPT_ANSWERS) answers.delete(answers.keys().next().value as string);
      if (rule === undefined) return result;
      return {
        ...result,
        output: withoutRecent(result.output as unknown as Record<string, unknown>, now() - lag),
      } as typeof result;
    },
    { step: 'initialize', name: 'cairnIndexLag' },
  );
}
