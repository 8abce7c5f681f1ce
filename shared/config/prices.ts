/**
 * CAIRN_PRICES: the price table budgets use to put a cost on tokens that a capability reports without one (Bedrock
 * and OpenAI-compatible agents report token counts only). A JSON object from a model id (as the binding names it:
 * Bedrock's `modelId`, the OpenAI-compatible `model`) or a capability target to US dollars per million tokens:
 * `{ "anthropic.claude-3-haiku-20240307-v1:0": { "inputPerMillion": 0.25, "outputPerMillion": 1.25 } }`.
 * Unpriced usage counts its tokens and costs $0.
 */
import { z } from 'zod';
import type { PriceTable } from '../engine/budget.ts';

const priceSchema = z.strictObject({
  inputPerMillion: z.number().finite().min(0),
  outputPerMillion: z.number().finite().min(0),
});
const tableSchema = z.record(z.string().min(1), priceSchema);

/** Parses the variable (absent: no prices); throws an Error whose message names what is wrong. */
export function parsePrices(raw: string | undefined): PriceTable {
  if (raw === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error('must be a JSON object of model id or target → { inputPerMillion, outputPerMillion }');
  }
  const parsed = tableSchema.safeParse(value);
  if (!parsed.success)
    throw new Error(
      `must map model ids or targets to { inputPerMillion, outputPerMillion } (US dollars): ${parsed.error.issues
        .map((i) => `${i.path.join('.') || '(root)'} ${i.message}`)
        .join('; ')}`,
    );
  return parsed.data;
}
