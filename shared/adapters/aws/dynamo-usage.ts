/**
 * Usage sums on the run and step items: `usageTokens` and `usageCostUsd` grow by ADD (DynamoDB adds decimals
 * exactly), and `usageCounted`, a string set of the attempt keys already added, makes each add conditional on its
 * attempt not being counted on that item yet. A repeated attempt (a retried invocation) therefore adds nothing, on
 * either item, whichever of the two writes it repeats. Single-item writes: dynalite has no transactions.
 */
import type { Spend } from '../../ports/capabilities.ts';
import type { Store } from '../../ports/store.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import { conditionalUpdate, type DynamoContext, getItem } from './dynamo-ops.ts';
import { type ItemKey, itemKeys, PARTITION_KEY } from './table-layout.ts';

type UsageOperations = Pick<Store, 'addUsage'>;

const COUNTED = 'usageCounted';

/** A number as a DynamoDB decimal string, without exponent notation (12 decimals: far below a micro-dollar). */
const decimal = (n: number): string => {
  const fixed = n.toFixed(12);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
};

const spendOf = (item: Record<string, { N?: string }> | undefined): Spend => ({
  tokens: Number(item?.usageTokens?.N ?? 0),
  costUsd: Number(item?.usageCostUsd?.N ?? 0),
});

export function usageOperations(ctx: DynamoContext): UsageOperations {
  const addOnce = async (key: ItemKey, member: string, spend: Spend): Promise<Spend> => {
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope)
      .add('usageTokens', { N: String(spend.tokens) }, 'tokens')
      .add('usageCostUsd', { N: decimal(spend.costUsd) }, 'cost')
      .add(COUNTED, { SS: [member] }, 'counted');
    const condition = scope.and(
      scope.exists(PARTITION_KEY),
      scope.not(scope.contains(COUNTED, { S: member }, 'member')),
    );
    const added = await conditionalUpdate(ctx, key, scope, update, condition);
    return spendOf((added ?? (await getItem(ctx, key))) as Record<string, { N?: string }> | undefined);
  };
  return {
    async addUsage(runId, stepId, key, spend) {
      const [step, run] = await Promise.all([
        addOnce(itemKeys.step(runId, stepId), key, spend),
        addOnce(itemKeys.run(runId), key, spend),
      ]);
      return { run, step };
    },
  };
}
