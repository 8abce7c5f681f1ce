/**
 * The embedded client's requests and answers as data, without the JSON text between them. What the fast path hands
 * dynalite must be what dynalite would have parsed from the SDK's body, and what it returns what the SDK would have
 * parsed from dynalite's: JSON's round trip. For the plain data the store adapter sends (objects, arrays, strings,
 * finite numbers, booleans, null) that round trip is a copy that leaves out members whose value is `undefined`; a
 * walk makes it at a fraction of the cost of the text. Anything else (bytes, a Date, NaN, a hole JSON would fill with
 * null) is not copied here but named, and the caller takes the SDK's path, as it does for binary values (a `B` or
 * `BS` member: the SDK turns base64 text into bytes and back).
 */

/** The answer of `wireCopy` for a value that must take the SDK's path. */
export const NOT_WIRE: unique symbol = Symbol('not wire data');

/** A binary member's name (`B`, `BS`), tested without a lookup: this runs for every member of every request. */
const isBinaryMember = (key: string): boolean => key.charCodeAt(0) === 66 && (key.length === 1 || key === 'BS');

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** JSON's round trip of `value`, or NOT_WIRE when it holds binary or anything JSON would not keep as it is. */
export function wireCopy(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : NOT_WIRE;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const copy: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const element = wireCopy(value[i]);
          if (element === NOT_WIRE) return NOT_WIRE;
          copy[i] = element;
        }
        return copy;
      }
      if (!isPlainObject(value)) return NOT_WIRE;
      const copy: Record<string, unknown> = {};
      for (const key in value) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        if (isBinaryMember(key)) return NOT_WIRE;
        const element = wireCopy(member);
        if (element === NOT_WIRE) return NOT_WIRE;
        copy[key] = element;
      }
      return copy;
    }
    default:
      // undefined, a function or a symbol: JSON leaves such a member out (handled above) and turns an element into null.
      return NOT_WIRE;
  }
}

/** Whether `value` is its own JSON round trip and holds no binary member. */
function isWire(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!isWire(value[i])) return false;
        return true;
      }
      if (!isPlainObject(value)) return false;
      for (const key in value) {
        if (isBinaryMember(key)) return false;
        if (!isWire((value as Record<string, unknown>)[key])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * An answer as the SDK's JSON parse would give it: the answer itself when it is its own round trip (no copy), else
 * its round trip; NOT_WIRE when that holds binary.
 */
export function wireOutput(answer: Record<string, unknown>): Record<string, unknown> | typeof NOT_WIRE {
  if (isWire(answer)) return answer;
  return wireCopy(JSON.parse(JSON.stringify(answer))) as Record<string, unknown> | typeof NOT_WIRE;
}
