/**
 * Which JSON number literals cairn refuses (E_JSON): the ones a double cannot carry, which `JSON.parse` would
 * otherwise change without a word. A plan or a request that says 12345678901234567890 must not run with
 * 12345678901234567000, nor one that says 1e-400 with 0.
 *
 * The rule, on the literal as written:
 * - an integer literal (no fraction, no exponent) outside ±(2^53−1), where doubles stop holding every integer;
 * - any literal that reads as ±Infinity (overflow, such as 1e400);
 * - any literal whose digits are not all zero that reads as 0 (underflow, such as 1e-400).
 * Other decimals (0.1, 3.14159265358979323846, 5e-324) are rounded to the nearest double as usual: a fraction is
 * taken to be approximate, a whole number is not. So every finite double JavaScript writes reads back, but for whole
 * numbers past 2^53, which it writes out in digits.
 */

/** Literals this short with no exponent are always exact enough: at most 15 digits, below 2^53. */
const ALWAYS_SAFE_LENGTH = 15;
const SHOWN_CHARS = 40;

const shown = (literal: string): string =>
  literal.length <= SHOWN_CHARS ? literal : `${literal.slice(0, SHOWN_CHARS)}… (${literal.length} characters)`;

/** Why a well-formed JSON number literal is refused, or undefined when a double carries it. */
export function numberProblem(literal: string): string | undefined {
  const value = Number(literal);
  if (!Number.isFinite(value)) return `the number ${shown(literal)} is too large for a double (it would be Infinity)`;
  const exponent = literal.search(/[eE]/);
  const integer = exponent === -1 && !literal.includes('.');
  if (integer) {
    return Number.isSafeInteger(value)
      ? undefined
      : `the integer ${shown(literal)} is beyond ±(2^53-1) and would lose precision as a double`;
  }
  const mantissa = exponent === -1 ? literal : literal.slice(0, exponent);
  return value === 0 && /[1-9]/.test(mantissa)
    ? `the number ${shown(literal)} is too small for a double (it would be 0)`
    : undefined;
}

/**
 * The end of the number literal starting at `start` in text already known to be JSON, and whether it needs
 * numberProblem's look: the common short literal without an exponent does not.
 */
export function numberLiteralEnd(text: string, start: number): { end: number; suspect: boolean } {
  let end = start;
  let exponent = false;
  for (; end < text.length; end += 1) {
    const c = text.charCodeAt(end);
    if ((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x2b) continue;
    if (c === 0x65 || c === 0x45) {
      exponent = true;
      continue;
    }
    break;
  }
  return { end, suspect: exponent || end - start > ALWAYS_SAFE_LENGTH };
}
