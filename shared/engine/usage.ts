/**
 * Tokens a model call consumed, as recorded on an attempt (`AttemptRecord.usage`). Counts only: the model that
 * consumed them is in the attempt's evidence, so a budget can price them per model.
 */
import type { ModelUsage } from '../ports/capabilities.ts';

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** A usage from untrusted counts (a provider's answer, an error's context): absent unless both are counts. */
export function usageOf(input: unknown, output: unknown): ModelUsage | undefined {
  const inputTokens = count(input);
  const outputTokens = count(output);
  return inputTokens === undefined || outputTokens === undefined ? undefined : { inputTokens, outputTokens };
}

const cost = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/**
 * The `usage` a capability reports in its answer (the wire envelope, see shared/capabilities/wire.ts):
 * `{ inputTokens?, outputTokens?, tokens?, costUsd? }`, counts whole and ≥ 0; `tokens` is a total when the split is
 * unknown (counted as input). Undefined when it is not such an object: the caller says the answer is malformed.
 */
export function reportedUsage(value: unknown): ModelUsage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const known = new Set(['inputTokens', 'outputTokens', 'tokens', 'costUsd']);
  if (Object.keys(record).some((key) => !known.has(key))) return undefined;
  const fields = ['inputTokens', 'outputTokens', 'tokens'].map((key) =>
    record[key] === undefined ? 0 : count(record[key]),
  );
  const costUsd = record.costUsd === undefined ? undefined : cost(record.costUsd);
  if (fields.some((n) => n === undefined) || (record.costUsd !== undefined && costUsd === undefined)) return undefined;
  const [input = 0, output = 0, total = 0] = fields as number[];
  return { inputTokens: input + total, outputTokens: output, ...(costUsd === undefined ? {} : { costUsd }) };
}
