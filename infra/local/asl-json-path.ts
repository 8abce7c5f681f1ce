/**
 * aws-local-stepfunctions reads every path of a state (InputPath, `.$` parameters, ResultPath's source, Choice
 * variables) with jsonpath-plus, called as `JSONPath({ path, json, wrap: false })`. jsonpath-plus answers a scalar
 * that way by throwing an Error from its constructor and catching it in the function (`NewError`, so that `new`
 * cannot return a string): a stack trace captured for every string a state reads, about 2 % of a zero-work step's
 * CPU on the embedded stack, beside the generic tracer it runs for a path as plain as `$.runId`.
 *
 * This replaces the evaluation that call makes for the paths the synthesized machines use: `$` followed by plain
 * property names (`$.runId`, `$$.Task.Token` is `$.Task.Token` on the context). Such a path follows own properties
 * from the root, as jsonpath-plus's tracer does for a name that is none of its operators, and answers the value, or
 * undefined when a property is missing. A scalar answer (or none) leaves the constructor as the `{ avoidNew, value }`
 * its function catches, without an Error. Any other path, option or way of calling goes to jsonpath-plus unchanged.
 *
 * Only the ES module build of jsonpath-plus is concerned, and in this process only aws-local-stepfunctions imports
 * it (asl-validator loads the CommonJS build, a separate copy).
 */
import { JSONPath } from 'jsonpath-plus';

/** `$` and plain property names: the paths evaluated here. */
const PLAIN_PATH = /^\$(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** Bounds the cache of split paths (a machine has a few dozen; ad hoc paths do not grow it). */
const MAX_PATHS = 1000;

type Evaluate = (this: JSONPathInstance, expr?: unknown, ...rest: unknown[]) => unknown;
interface JSONPathInstance {
  readonly resultType: string;
  readonly wrap: boolean;
  readonly flatten: boolean;
  readonly callback: unknown;
  readonly parent: unknown;
  readonly parentProperty: unknown;
}

const names = new Map<string, readonly string[]>();
function namesOf(path: string): readonly string[] | undefined {
  let found = names.get(path);
  if (found === undefined) {
    if (!PLAIN_PATH.test(path)) return undefined;
    if (names.size >= MAX_PATHS) names.clear();
    found = path.split('.').slice(1);
    names.set(path, found);
  }
  return found;
}

/** The call aws-local-stepfunctions makes: the constructor's own `evaluate({ path, json })` of `{ path, json, wrap: false }`. */
function isPlainCall(
  self: JSONPathInstance,
  expr: unknown,
  rest: readonly unknown[],
): expr is { path: string; json: unknown } {
  if (rest.length > 0 || expr === null || typeof expr !== 'object') return false;
  const keys = Object.keys(expr);
  return (
    keys.length === 2 &&
    Object.hasOwn(expr, 'path') &&
    Object.hasOwn(expr, 'json') &&
    typeof (expr as { path: unknown }).path === 'string' &&
    self.wrap === false &&
    self.resultType === 'value' &&
    self.flatten === false &&
    self.callback === null &&
    self.parent === null &&
    self.parentProperty === null
  );
}

/** What the plain path reads from `json`, or undefined (nothing matched), as jsonpath-plus's tracer follows it. */
function follow(json: unknown, path: readonly string[]): unknown {
  // jsonpath-plus answers nothing for a falsy document, whatever the path.
  if (!json) return undefined;
  let value: unknown = json;
  for (const name of path) {
    if (!value || !Object.hasOwn(value as object, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

let installed = false;

/** Makes jsonpath-plus answer plain paths as described above (once per process). */
export function evaluatePlainJsonPaths(): void {
  if (installed) return;
  installed = true;
  const prototype = JSONPath.prototype as unknown as { evaluate: Evaluate };
  const original = prototype.evaluate;
  prototype.evaluate = function evaluate(this: JSONPathInstance, expr?: unknown, ...rest: unknown[]) {
    if (!isPlainCall(this, expr, rest)) return original.call(this, expr, ...rest);
    const path = namesOf(expr.path);
    if (path === undefined) return original.call(this, expr, ...rest);
    const value = follow(expr.json, path);
    // What the constructor returns, or what JSONPath() catches from it for a scalar (its NewError, but no Error).
    if (value && typeof value === 'object') return value;
    throw { avoidNew: true, value };
  };
}
