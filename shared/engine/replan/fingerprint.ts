/**
 * The no-progress fingerprint: a replan that ends in the same failure again (same step lineage, same error code,
 * same message once the parts that vary between attempts are masked) has not helped, and the run pauses instead of
 * spending the rest of its replan budget.
 *
 * Lineage: a step keeps its id across revisions (HTN ids follow the task tree, a substitution keeps the id), so a
 * step's lineage is its id, unless a replan recorded that the step took over from another (`replaces`, new id →
 * old id); then it inherits that step's lineage.
 */

/** New step id → the id it took over from, accumulated over a run's replans. */
export type LineageMap = Readonly<Record<string, string>>;

/** The id a step descends from: follows `replaces` links back to the first step (cycles stop where they close). */
export function stepLineage(stepId: string, lineage: LineageMap = {}): string {
  const seen = new Set<string>([stepId]);
  let current = stepId;
  for (let next = lineage[current]; next !== undefined && !seen.has(next); next = lineage[current]) {
    seen.add(next);
    current = next;
  }
  return current;
}

/** Merges the `replaces` records of successive replans (later ones win on the same id). */
export function mergeLineage(...maps: readonly (LineageMap | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const map of maps) if (map) for (const [id, from] of Object.entries(map)) if (id !== from) out[id] = from;
  return out;
}

// Order matters: timestamps and uuids hold digits and hex, quoted values hold anything.
const MASKS: readonly [RegExp, string][] = [
  // a single quote after a letter is an apostrophe ("can't"), not the start of a quoted value
  [/"(?:[^"\\]|\\.)*"|(?<![\p{L}\p{N}])'(?:[^'\\]|\\.)*'|`[^`]*`|“[^”]*”/gu, '<str>'],
  [/\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b\d{4}-\d{2}-\d{2}\b/g, '<time>'],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>'],
  [/\b0x[0-9a-f]+\b/g, '<hex>'],
  // a run of hex of 8+ characters with at least one digit: hashes, trace and request ids
  [/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/g, '<hex>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
];

/** The message with what varies between attempts masked: lowercased, quoted values, times, ids and numbers replaced, whitespace collapsed. */
export function normalizeErrorMessage(message: string): string {
  let out = message.toLowerCase();
  for (const [pattern, mask] of MASKS) out = out.replace(pattern, mask);
  return out.replace(/\s+/g, ' ').trim();
}

/** 64-bit FNV-1a over UTF-16 code units, as 16 hex digits: short, stable, no crypto needed for a comparison key. */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (let i = 0; i < text.length; i++) hash = ((hash ^ BigInt(text.charCodeAt(i))) * prime) & mask;
  return hash.toString(16).padStart(16, '0');
}

export interface FailureFingerprintInput {
  /** The failed step's lineage (stepLineage). */
  readonly lineage: string;
  readonly code: string;
  readonly message: string;
}

/** `<lineage>|<code>|<hash of the normalized message>`: equal for the same failure seen again. */
export function failureFingerprint(input: FailureFingerprintInput): string {
  return `${input.lineage}|${input.code}|${fnv1a64(normalizeErrorMessage(input.message))}`;
}
