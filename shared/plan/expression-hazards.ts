/**
 * What the validator can see in an expression's AST that would only end at a bound of the sandbox (see
 * expression-limits.ts), reported as E_EXPRESSION_UNSAFE so the plan is refused before it runs:
 *
 * - a regular expression with a quantified group that itself holds an unbounded quantifier (`(a+)+`, `(\w*)*`,
 *   `(a+){2,9}`) or with a backreference (`\1`, `\k<name>`): the shapes whose backtracking is exponential or
 *   worse in V8's engine. JSONata has no way to build a regular expression from a string, so every one a plan uses
 *   is a literal in the AST and this check sees them all;
 * - a function that calls itself through its own name (`$f := function($n){ … $f(…) … }`), directly or through other
 *   functions bound in the same expression. Plans wire data: `$map`, `$filter`, `$reduce` and `$sift` iterate
 *   without recursion.
 *
 * Neither check is complete (an alternation that overlaps, `(a|a)*`, or recursion through a function passed as an
 * argument, pass): the worker's time and memory bounds stop those at run time.
 */

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every object node below `root` (AST nodes and the arrays holding them), each once. */
function* nodesOf(root: unknown): Generator<Node> {
  const pending: unknown[] = [root];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null || seen.has(node) || node instanceof RegExp) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item);
      continue;
    }
    yield node as Node;
    for (const key in node) pending.push((node as Node)[key]);
  }
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

/** The quantifier at the start of `rest`: whether it repeats (can match more than once) and whether it is unbounded. */
function quantifierAt(rest: string): { length: number; repeats: boolean; unbounded: boolean } | undefined {
  const first = rest[0];
  if (first === '*' || first === '+') return { length: 1, repeats: true, unbounded: true };
  if (first === '?') return { length: 1, repeats: false, unbounded: false };
  const braces = REPEAT.exec(rest);
  if (!braces) return undefined;
  const min = Number(braces[1]);
  const unbounded = braces[2] !== undefined && braces[3] === '';
  const max = braces[2] === undefined ? min : unbounded ? Number.POSITIVE_INFINITY : Number(braces[3]);
  return { length: braces[0].length, repeats: max > 1, unbounded };
}

/** Why a regular expression's source risks catastrophic backtracking, or undefined. */
export function regexHazard(source: string): string | undefined {
  // Per open group: whether something inside it repeats without bound.
  const groups: boolean[] = [false];
  let i = 0;
  const mark = () => {
    groups[groups.length - 1] = true;
  };
  while (i < source.length) {
    const c = source[i] as string;
    let atomEnd = i + 1;
    let closed: boolean | undefined;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && source[i + 2] === '<'))
        return `the regular expression /${source}/ uses a backreference`;
      atomEnd = i + 2;
    } else if (c === '[') {
      let j = i + 1;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      atomEnd = j + 1;
    } else if (c === '(') {
      groups.push(false);
      const prefix = /^\(\?(?:[:=!]|<[=!]|<[A-Za-z_$][\w$]*>)/.exec(source.slice(i));
      i += prefix ? prefix[0].length : 1;
      continue;
    } else if (c === ')') {
      closed = groups.pop() ?? false;
      if (groups.length === 0) groups.push(false);
    }
    const quantifier = quantifierAt(source.slice(atomEnd));
    if (quantifier) {
      if (closed === true && quantifier.repeats)
        return `the regular expression /${source}/ nests quantifiers (a repeated group holds a repeat)`;
      if (quantifier.unbounded || closed === true) mark();
      atomEnd += quantifier.length;
      if (source[atomEnd] === '?') atomEnd += 1; // lazy
    } else if (closed === true) mark();
    i = atomEnd;
  }
  return undefined;
}

/** The names of the functions an expression binds (`$f := function…`), each with the variables its body reads. */
function boundFunctions(ast: unknown): Map<string, Set<string>> {
  const functions = new Map<string, Set<string>>();
  for (const node of nodesOf(ast)) {
    if (node.type !== 'bind' || !isNode(node.lhs) || !isNode(node.rhs) || node.rhs.type !== 'lambda') continue;
    const name = node.lhs.value;
    if (typeof name !== 'string') continue;
    const reads = functions.get(name) ?? new Set<string>();
    for (const inner of nodesOf(node.rhs.body))
      if (inner.type === 'variable' && typeof inner.value === 'string') reads.add(inner.value);
    functions.set(name, reads);
  }
  return functions;
}

/** A cycle of bound functions reading each other, as the names on it, or undefined. */
function recursion(functions: ReadonlyMap<string, ReadonlySet<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'open') return [...path.slice(path.indexOf(name)), name];
    state.set(name, 'open');
    path.push(name);
    for (const next of functions.get(name) ?? []) {
      if (!functions.has(next)) continue;
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(name, 'done');
    return undefined;
  };
  for (const name of functions.keys()) {
    const cycle = visit(name);
    if (cycle) return cycle;
  }
  return undefined;
}

/** What in an expression's AST the sandbox would have to stop at run time (empty when nothing is seen). */
export function expressionHazards(ast: unknown): string[] {
  const hazards: string[] = [];
  for (const node of nodesOf(ast)) {
    if (node.type !== 'regex' || !(node.value instanceof RegExp)) continue;
    const hazard = regexHazard(node.value.source);
    if (hazard !== undefined) hazards.push(`${hazard}; write it without nested quantifiers or backreferences`);
  }
  const cycle = recursion(boundFunctions(ast));
  if (cycle)
    hazards.push(
      `recursive function ${cycle.map((name) => `$${name}`).join(' → ')}: plan expressions may not recurse ` +
        '(use $map, $filter, $reduce or $sift)',
    );
  return hazards;
}
