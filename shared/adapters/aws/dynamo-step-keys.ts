/**
 * The keys of a run's step and attempt items, spelt with the run's step partitions (table-layout.ts; what this
 * process knows of them: dynamo-layouts.ts).
 */

import type { Item } from './dynamo-attributes.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { type DynamoContext, getItemProjected, partitionItemsQuery, queryAll } from './dynamo-ops.ts';
import { itemKeys, SORT_KEY } from './table-layout.ts';

/** The run's step partitions: remembered, else read from its item (1 for a run that is not there or not started). */
export async function stepShardsOf(ctx: DynamoContext, runId: string): Promise<number> {
  const known = ctx.layouts.known(runId);
  if (known !== undefined) return known;
  const scope = new ExpressionScope();
  const projection = `${scope.name('stepShards')}, ${scope.name('startedAt')}`;
  const item = await getItemProjected(ctx, itemKeys.run(runId), projection, scope);
  const shards = item?.stepShards?.N === undefined ? 1 : Number(item.stepShards.N);
  const startedAt = item?.startedAt?.S;
  ctx.layouts.learn(startedAt === undefined ? undefined : { runId, startedAt, stepShards: shards });
  return shards;
}

const bySortKey = (a: Item, b: Item): number => {
  const left = a[SORT_KEY]?.S ?? '';
  const right = b[SORT_KEY]?.S ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
};

/**
 * The items of every partition of a run's steps whose sort key starts with `prefix` (one query each, in parallel),
 * merged in sort key order, so a reader sees them as one partition's query would give them; only `projection`, if
 * named.
 */
export async function queryStepPartitions(
  ctx: DynamoContext,
  runId: string,
  shards: number,
  prefix: string,
  projection?: readonly string[],
): Promise<Item[]> {
  const partitions = itemKeys.stepPartitions(runId, shards);
  // The merge is by sort key: a projection keeps it.
  const shown = projection === undefined || partitions.length === 1 ? projection : [...projection, SORT_KEY];
  const pages = await Promise.all(partitions.map((pk) => queryAll(ctx, partitionItemsQuery(pk, prefix, shown))));
  return pages.length === 1 ? (pages[0] ?? []) : pages.flat().sort(bySortKey);
}
