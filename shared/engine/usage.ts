/**
 * Tokens a model call consumed, as recorded on an attempt (`AttemptRecord.usage`). Counts only: the model that
 * consumed them is in the attempt's evidence, so a budget can price them per model. Summing is here, pure, so
 * whoever keeps a budget (per step, per run) adds records the same way.
 */
import type { ModelUsage } from '../ports/capabilities.ts';

export const NO_USAGE: ModelUsage = { inputTokens: 0, outputTokens: 0 };

/** The sum of two usages. */
export const addUsage = (a: ModelUsage, b: ModelUsage): ModelUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});

/** The total of every record that has a usage (attempts of a step, of a run); records without one count zero. */
export const sumUsage = (records: Iterable<{ readonly usage?: ModelUsage | undefined }>): ModelUsage => {
  let total = NO_USAGE;
  for (const record of records) if (record.usage !== undefined) total = addUsage(total, record.usage);
  return total;
};

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** A usage from untrusted counts (a provider's answer, an error's context): absent unless both are counts. */
export function usageOf(input: unknown, output: unknown): ModelUsage | undefined {
  const inputTokens = count(input);
  const outputTokens = count(output);
  return inputTokens === undefined || outputTokens === undefined ? undefined : { inputTokens, outputTokens };
}
