/**
 * JSONata expressions in plans: a string of the exact form `"{% <JSONata> %}"` is evaluated at run time with
 * `$objective`, `$outputs` (upstream step id → its output) and, in success criteria, `$output`.
 *
 * The validator needs to know statically which steps an expression reads, so only the forms that name a step in
 * the text count as references: `$outputs.X`, `$outputs."X-y"`, `` $outputs.`X` ``. Anything else that can reach
 * an output it does not name cannot be checked and is reported as a dynamic reference: a use of `$outputs` other
 * than those (`$outputs[$x]`, `$lookup($outputs, …)`, `$outputs.*`, binding `$outputs` to another variable), the
 * parent operator climbing from `$outputs.X` back to `$outputs` (`$outputs.X.%.Y` reads step Y), a focus binding on
 * the step's name (`$outputs.X@$v.Y` keeps `$outputs` as the context, so it reads step Y too) and `$eval`, which
 * evaluates a string known only at run time over the same bindings.
 */
import jsonata from 'jsonata';
import { expressionHazards } from './expression-hazards.ts';
import {
  defaultExpressionLimits,
  type ExpressionBindings,
  type ExpressionLimits,
  evaluateBounded,
} from './expression-limits.ts';
import { child } from './issues.ts';
import { EXPRESSION_PATTERN } from './schema.ts';

export const isExpression = (v: unknown): v is string => typeof v === 'string' && EXPRESSION_PATTERN.test(v);

/** The JSONata between `{%` and `%}`, trimmed; a string that is not an expression is returned as it is. */
export function expressionBody(s: string): string {
  const match = EXPRESSION_PATTERN.exec(s);
  return match ? (match[1] ?? '').trim() : s;
}

export type ParsedExpression = { ok: true; ast: unknown } | { ok: false; message: string };

// Plans repeat expressions (generated plans especially); parsing is the costly part, so results are memoised.
const CACHE_LIMIT = 4096;
const parsedCache = new Map<string, ParsedExpression>();
const compiledCache = new Map<string, jsonata.Expression>();

const remember = <V>(cache: Map<string, V>, key: string, value: V): V => {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
};

const describeJsonataError = (error: unknown): string => {
  if (typeof error === 'object' && error !== null) {
    const { message, position, code } = error as { message?: unknown; position?: unknown; code?: unknown };
    const where = typeof position === 'number' ? ` at position ${position}` : '';
    const tag = typeof code === 'string' ? ` [${code}]` : '';
    if (typeof message === 'string') return `${message}${where}${tag}`;
  }
  return String(error);
};

function compile(body: string): jsonata.Expression {
  const cached = compiledCache.get(body);
  if (cached) return cached;
  return remember(compiledCache, body, jsonata(body));
}

/** Parses JSONata; accepts either the bare JSONata or the whole `{% … %}` string. */
export function parseExpression(s: string): ParsedExpression {
  const body = isExpression(s) ? expressionBody(s) : s;
  const cached = parsedCache.get(body);
  if (cached) return cached;
  let result: ParsedExpression;
  try {
    result = { ok: true, ast: compile(body).ast() };
  } catch (error) {
    result = { ok: false, message: describeJsonataError(error) };
  }
  return remember(parsedCache, body, result);
}

export interface StepReferences {
  /** Step ids named statically after `$outputs`. */
  readonly steps: Set<string>;
  /** Uses of `$outputs` that cannot be checked statically, described for an error message. */
  readonly problems: string[];
}

type AstNode = Record<string, unknown>;
const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOutputsVariable = (v: unknown): v is AstNode => isNode(v) && v.type === 'variable' && v.value === 'outputs';
// A variable step carrying any of these is not a plain `$outputs` (predicates, positional or context bindings).
const DECORATIONS = ['predicate', 'stages', 'group', 'focus', 'index', 'tuple', 'ancestor'];
const isPlain = (node: AstNode): boolean => DECORATIONS.every((key) => node[key] === undefined);
const at = (node: AstNode): string => (typeof node.position === 'number' ? ` at position ${node.position}` : '');

function stringFilter(node: AstNode): string | undefined {
  const predicate = node.predicate;
  if (!Array.isArray(predicate)) return undefined;
  const first: unknown = predicate[0];
  if (!isNode(first) || first.type !== 'filter' || !isNode(first.expr) || first.expr.type !== 'string')
    return undefined;
  return typeof first.expr.value === 'string' ? first.expr.value : undefined;
}

const positionOf = (node: AstNode): number => (typeof node.position === 'number' ? node.position : 0);

const EVAL_PROBLEM =
  'evaluates a string at run time, which may read any output: the steps it reads cannot be checked, so $eval is refused';

/*
 * JSONata's parser marks the step a parent operator climbs to with `ancestor` (it binds that step's input, here
 * `$outputs`), and a focus binding (`@$v`) leaves the step's input as the context of the steps after it.
 */
function escapeFromStep(name: AstNode, id: string): string | undefined {
  if (name.ancestor !== undefined)
    return (
      `the parent operator % climbs from $outputs.${id}${at(name)} back to $outputs, so the step it reads cannot ` +
      `be checked: write $outputs.<step id>`
    );
  if (name.focus !== undefined)
    return (
      `$outputs.${id}@$${String(name.focus)}${at(name)} keeps $outputs as the context of the steps after it, so the ` +
      'step they read cannot be checked: bind $outputs.<step id> with := instead'
    );
  return undefined;
}

/**
 * Every step an expression AST reads through `$outputs`, and every use of `$outputs` that hides which step; both
 * in source order.
 */
export function stepReferences(ast: unknown): StepReferences {
  const found: { at: number; id: string }[] = [];
  const issues: { at: number; problem: string }[] = [];
  const handled = new Set<AstNode>();
  const seen = new Set<object>();
  const pending: unknown[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item);
      continue;
    }
    const record = node as AstNode;
    if (record.type === 'path' && Array.isArray(record.steps)) {
      record.steps.forEach((step: unknown, k: number, all: unknown[]) => {
        if (!isOutputsVariable(step)) return;
        const next: unknown = all[k + 1];
        if (isPlain(step) && isNode(next) && next.type === 'name' && typeof next.value === 'string') {
          found.push({ at: positionOf(step), id: next.value });
          handled.add(step);
          const leak = escapeFromStep(next, next.value);
          if (leak !== undefined) issues.push({ at: positionOf(next), problem: leak });
        }
      });
    }
    if (record.type === 'variable' && record.value === 'eval')
      issues.push({ at: positionOf(record), problem: `$eval${at(record)} ${EVAL_PROBLEM}` });
    if (isOutputsVariable(record) && !handled.has(record)) {
      const id = stringFilter(record);
      const problem =
        id === undefined
          ? `dynamic step reference${at(record)}: write $outputs.<step id> so the step can be checked`
          : `$outputs[${JSON.stringify(id)}]${at(record)} is a JSONata filter that yields every output, not the ` +
            `output of ${JSON.stringify(id)}: write $outputs.${JSON.stringify(id)}`;
      if (id !== undefined) found.push({ at: positionOf(record), id });
      issues.push({ at: positionOf(record), problem });
    }
    for (const key in record) {
      const value = record[key];
      if (typeof value === 'object' && value !== null) pending.push(value);
    }
  }
  found.sort((a, b) => a.at - b.at);
  issues.sort((a, b) => a.at - b.at);
  return { steps: new Set(found.map((f) => f.id)), problems: issues.map((i) => i.problem) };
}

/** The step ids an expression AST names after `$outputs` (see stepReferences for the uses it cannot name). */
export const referencedSteps = (ast: unknown): Set<string> => stepReferences(ast).steps;

export interface FoundExpression {
  readonly path: string;
  readonly source: string;
}

/** Every expression string inside a JSON value, with its JSON Pointer below `basePath`. */
export function collectExpressions(value: unknown, basePath: string): FoundExpression[] {
  const found: FoundExpression[] = [];
  const pending: { value: unknown; path: string }[] = [{ value, path: basePath }];
  const seen = new Set<object>();
  for (let next = pending.pop(); next; next = pending.pop()) {
    const current = next.value;
    if (typeof current === 'string') {
      if (isExpression(current)) found.push({ path: next.path, source: current });
    } else if (typeof current === 'object' && current !== null && !seen.has(current)) {
      seen.add(current);
      if (Array.isArray(current)) {
        for (let i = current.length - 1; i >= 0; i -= 1) pending.push({ value: current[i], path: child(next.path, i) });
      } else {
        const keys = Object.keys(current);
        for (let i = keys.length - 1; i >= 0; i -= 1) {
          const key = keys[i] as string;
          pending.push({ value: (current as Record<string, unknown>)[key], path: child(next.path, key) });
        }
      }
    }
  }
  return found;
}

/** Whether a JSON value holds any expression, without building paths (the validator's fast path). */
export function containsExpression(value: unknown): boolean {
  const pending: unknown[] = [value];
  const seen = new Set<object>();
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === 'string') {
      if (current.startsWith('{%') && isExpression(current)) return true;
    } else if (typeof current === 'object' && current !== null && !seen.has(current)) {
      seen.add(current);
      if (Array.isArray(current)) for (const item of current) pending.push(item);
      else for (const key in current) pending.push((current as Record<string, unknown>)[key]);
    }
  }
  return false;
}

export type ExpressionAnalysis =
  | {
      ok: true;
      steps: readonly string[];
      problems: readonly string[];
      /** What only a bound of the sandbox would stop (see expression-hazards.ts). */
      hazards: readonly string[];
    }
  | { ok: false; message: string };

/*
 * Plans repeat the same expression shapes with different step ids (`$outputs.a.text`, `$outputs.b.text`, ...), and
 * parsing JSONata is the costly part of validating expressions. So `$outputs.<name>` is replaced by a numbered
 * placeholder before parsing and the analysis is cached per template. This is exact because the lexer treats the
 * name and the placeholder alike: both are runs of [A-Za-z0-9_] that start with a letter or '_', end at one of the
 * lexer's stop characters, are no keyword, and sit after a '.' (inside a string, a regex or a comment the run is
 * just text in both cases).
 */
const REFERENCE = /(?<![A-Za-z0-9_$])\$outputs\.([A-Za-z_][A-Za-z0-9_]*)(?=[ \t\n\r\v.[\]{}(),@#;:?+\-*/%|=<>^&!~]|$)/g;
const KEYWORDS = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);
const PLACEHOLDER = '__cairn_ref_';
const analysisCache = new Map<string, ExpressionAnalysis>();

function analyseBody(body: string): ExpressionAnalysis {
  const cached = analysisCache.get(body);
  if (cached) return cached;
  const parsed = parseExpression(body);
  if (!parsed.ok) return remember(analysisCache, body, parsed);
  const { steps, problems } = stepReferences(parsed.ast);
  return remember(analysisCache, body, {
    ok: true,
    steps: [...steps],
    problems,
    hazards: expressionHazards(parsed.ast),
  });
}

/** Parses an expression and lists the steps it reads through `$outputs` and the uses it cannot check statically. */
export function analyseExpression(source: string): ExpressionAnalysis {
  const body = isExpression(source) ? expressionBody(source) : source;
  if (body.includes(PLACEHOLDER)) return analyseBody(body);
  const ids: string[] = [];
  const template = body.replace(REFERENCE, (match: string, name: string) => {
    if (KEYWORDS.has(name)) return match;
    ids.push(name);
    return `$outputs.${PLACEHOLDER}${ids.length - 1}`;
  });
  const shape = analyseBody(template);
  if (!shape.ok || shape.problems.length > 0) {
    // Messages carry positions, which only the original text gets right.
    return ids.length === 0 ? shape : analyseBody(body);
  }
  const steps = shape.steps.map((name) =>
    name.startsWith(PLACEHOLDER) ? (ids[Number(name.slice(PLACEHOLDER.length))] ?? name) : name,
  );
  return { ok: true, steps: [...new Set(steps)], problems: [], hazards: shape.hazards };
}

export type { ExpressionBindings } from './expression-limits.ts';

/**
 * Evaluates an expression (`{% … %}` or bare JSONata) with `$objective`, `$outputs` and, when given, `$output`, in
 * this thread under the cooperative bounds of expression-limits.ts (the default ones unless given). The engine
 * evaluates plan expressions through its ExpressionEvaluator instead, isolated.
 */
export function evaluateExpression(
  source: string,
  bindings: ExpressionBindings,
  limits: ExpressionLimits = defaultExpressionLimits(),
): Promise<unknown> {
  return evaluateBounded(source, bindings, limits);
}
