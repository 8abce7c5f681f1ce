/**
 * What a test of terminal output looks for, written out apart from the code under test: the characters a terminal
 * obeys or that reorder a line (C0 controls but newline and tab, DEL, C1 controls, bidi controls, U+2028/U+2029).
 */
const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];

const isRawControl = (code: number): boolean =>
  (code < 0x20 && code !== 0x0a && code !== 0x09) ||
  (code >= 0x7f && code <= 0x9f) ||
  BIDI.includes(code) ||
  code === 0x2028 ||
  code === 0x2029;

/** The raw control characters in `text`, as `U+XXXX`, so a failure names what got through. */
export const rawControls = (text: string): string[] =>
  [...text]
    .map((c) => c.codePointAt(0) ?? 0)
    .filter(isRawControl)
    .map((code) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`);
