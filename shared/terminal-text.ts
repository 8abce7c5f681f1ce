/**
 * Text that came from outside (a run's objective, a person's question, a tool's or a model's error, an MCP server's
 * tool names) made safe to print on a terminal. A terminal obeys what it is sent: ESC and OSC sequences set the
 * window title, write hyperlinks or clear the screen, BEL rings, a carriage return lets later text overwrite what a
 * line said, and bidi controls reorder what is shown. Each such character is shown instead as `\uXXXX`, its code
 * point in four lowercase hex digits (JSON's escape): ESC prints as `\u001b`. Backslashes are left as they are, so
 * a literal `\u001b` in the text reads the same; that is ambiguous to a reader but never obeyed by the terminal.
 *
 * Pure, with no dependencies: every layer that prints may use it.
 */

const NEWLINE = 0x0a;
const TAB = 0x09;

/** The bidi marks, embeddings, overrides and isolates: each can make a line display other than it reads. */
const BIDI = new Set([0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

/** U+2028 and U+2029 break lines in some renderers and not in others: never raw. */
const SEPARATORS = new Set([0x2028, 0x2029]);

/** Whether a code point must not reach a terminal raw; `block` lets newline and tab through. */
function isUnsafe(code: number, block: boolean): boolean {
  if (code < 0x20) return !(block && (code === NEWLINE || code === TAB));
  // DEL and the C1 controls (U+0080-U+009F: CSI, OSC, NEL... as single characters).
  if (code >= 0x7f && code <= 0x9f) return true;
  return BIDI.has(code) || SEPARATORS.has(code);
}

const escapeOf = (code: number): string => `\\u${code.toString(16).padStart(4, '0')}`;

function escapeUnsafe(text: string, block: boolean): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    // Every unsafe code point is in the Basic Multilingual Plane, so UTF-16 units are enough.
    const code = text.charCodeAt(i);
    if (!isUnsafe(code, block)) continue;
    out += text.slice(start, i) + escapeOf(code);
    start = i + 1;
  }
  return start === 0 ? text : out + text.slice(start);
}

/**
 * For a one-line field or a whole line (an objective, a status line, an error message): newline and tab are
 * escaped too, so the field cannot start a line that looks like the program's own.
 */
export const terminalLine = (text: string): string => escapeUnsafe(text, false);

/** For a block that may span lines (a question a person reads): newline and tab stay, everything else as above. */
export const terminalBlock = (text: string): string => escapeUnsafe(text, true);

/**
 * JSON for a program reading the CLI's output, still safe if it lands on a terminal. JSON.stringify escapes the C0
 * controls already but leaves DEL, the C1 controls, the bidi controls and U+2028/U+2029 raw; they can only occur
 * inside JSON strings, where `\uXXXX` is the same character, so the output parses to the same value.
 */
export const terminalJson = (value: unknown, indent?: number): string =>
  escapeUnsafe(JSON.stringify(value, null, indent), true);
