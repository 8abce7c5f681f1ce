/**
 * Text made from input, bounded where it is made. An error message or a list of issues can be built from anything
 * a plan, a model or a capability hands over: `$error($pad("", 9999999))` is a 10 MB message, an array input whose
 * 200,000 items each break a contract is 200,000 issues. Such text is stored (a step's error, an attempt, a run's
 * terminal evidence), published and shown on every read of the run, and one run view over Lambda's 6 MB answer
 * is a bare 500 for everyone who lists runs. So every source cuts it here, the same way:
 *
 * - a message keeps its first `MAX_MESSAGE_CHARS` characters and ends with `…` when it was cut;
 * - a list of issues keeps its first `MAX_LISTED_ISSUES` items, each of at most `MAX_ISSUE_CHARS`, and then one
 *   final item `and N more`; the items past the cap are counted, never formatted.
 *
 * Pure, and imported by every layer (plan, engine, capabilities, adapters, services, API).
 */

/** The longest message (an error's, a failure's, a reason) anything stores or answers. */
export const MAX_MESSAGE_CHARS = 2000;

/** The most items a list of issues keeps; one final `and N more` counts the rest. */
export const MAX_LISTED_ISSUES = 100;

/** The longest item of a list of issues (a plan issue's message, and its path). */
export const MAX_ISSUE_CHARS = 500;

const MORE = /^and (\d+) more$/;

/** The final item of a list cut at its cap: how many items were left out. */
export const moreItems = (count: number): string => `and ${count} more`;

/** The count an `and N more` item names, or undefined when `text` is no such item. */
export function moreCount(text: string): number | undefined {
  const match = MORE.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** `text` whole when it has at most `max` characters, else its head and `…` (never half a surrogate pair). */
export function clipMessage(text: string, max: number = MAX_MESSAGE_CHARS): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}…`;
}

/**
 * A list of issues, bounded: the first `max` items, each formatted (only those are) and clipped to `itemChars`, then
 * `and N more` when there were more. A list bounded before keeps its count: its own final `and N more` is carried
 * over, not taken for one more issue, so bounding twice changes nothing.
 */
export function boundIssues<T>(
  items: readonly T[],
  format: (item: T) => string = String,
  options: { readonly max?: number; readonly itemChars?: number } = {},
): string[] {
  const max = options.max ?? MAX_LISTED_ISSUES;
  const itemChars = options.itemChars ?? MAX_ISSUE_CHARS;
  const last = items.at(-1);
  const carried = typeof last === 'string' ? moreCount(last) : undefined;
  const listed = carried === undefined ? items : items.slice(0, -1);
  const more = Math.max(0, listed.length - max) + (carried ?? 0);
  const kept = listed.slice(0, max).map((item) => clipMessage(format(item), itemChars));
  return more > 0 ? [...kept, moreItems(more)] : kept;
}

/**
 * Items joined into one message of at most `max` characters: joining stops once the message is full, so a list of
 * any length costs no more than the message it makes.
 */
export function joinIssues(items: readonly string[], separator = '; ', max: number = MAX_MESSAGE_CHARS): string {
  let out = '';
  for (let i = 0; i < items.length; i++) {
    out += i === 0 ? items[i] : `${separator}${items[i]}`;
    if (out.length > max) return clipMessage(out, max);
  }
  return out;
}

/** The message of anything thrown, bounded: an Error's message, a string, else its JSON or its String. */
export function messageOf(error: unknown, max: number = MAX_MESSAGE_CHARS): string {
  return clipMessage(rawMessage(error), max);
}

function rawMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    // A cycle, a BigInt, a throwing toJSON: its String, unless that throws too.
    try {
      return String(error);
    } catch {
      return 'an unprintable value';
    }
  }
}

/**
 * A JSON value cut to about `maxChars` characters of JSON: strings clipped, arrays and objects keeping their first
 * members while room is left and then one `and N more` (an array's last item; an object's `"…"` key). Only what is
 * kept is visited, so a value of any size costs no more than the preview. `truncated` says whether anything was cut.
 */
export function boundJson(value: unknown, maxChars: number): { readonly value: unknown; readonly truncated: boolean } {
  let room = maxChars;
  let truncated = false;
  const text = (s: string): string => {
    const fit = Math.max(16, room - 2);
    const out = s.length > fit ? clipMessage(s, fit) : s;
    if (out !== s) truncated = true;
    room -= out.length + 2;
    return out;
  };
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return text(node);
    if (node === null || typeof node !== 'object') {
      room -= String(node).length;
      return node;
    }
    if (Array.isArray(node)) {
      const out: unknown[] = [];
      for (let i = 0; i < node.length; i++) {
        if (room <= 0) {
          truncated = true;
          out.push(moreItems(node.length - i));
          break;
        }
        out.push(walk(node[i]));
        room -= 1;
      }
      room -= 2;
      return out;
    }
    const out: Record<string, unknown> = {};
    const keys = Object.keys(node);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (room <= 0) {
        truncated = true;
        out['…'] = moreItems(keys.length - i);
        break;
      }
      out[text(key)] = walk((node as Record<string, unknown>)[key]);
      room -= 2;
    }
    room -= 2;
    return out;
  };
  const bounded = walk(value);
  return { value: bounded, truncated };
}
