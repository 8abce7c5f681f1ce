/**
 * Plan expressions under bounds. JSONata is a complete language: a plan can write a loop that never ends, a recursion
 * that eats the heap, or ask a built-in for a 100 MB string. Every evaluation of a plan expression goes through
 * `evaluateBounded`, which gives JSONata its own guardrails (evaluation time, evaluation depth, sequence length) and
 * replaces the built-ins that build strings by size (`$pad`) with versions that check first.
 *
 * These are cooperative bounds: they hold between two evaluation steps, not inside one native call (a backtracking
 * regular expression, a huge `$replace`) and not for memory. So the services evaluate through an
 * ExpressionEvaluator (shared/ports/expressions.ts) that runs this code in a worker with a heap limit and a
 * wall-clock kill (shared/adapters/expressions); `createInProcessEvaluator` below is the same code without that
 * isolation, for tests and tools that evaluate trusted expressions.
 *
 * Any bound that is hit is an ExpressionLimitError (`E_EXPRESSION_LIMIT`, never retryable).
 */
import jsonata from 'jsonata';
import { DEFAULT_EXPRESSION_LIMITS } from '../config/defaults.ts';
import { ExpressionLimitError } from '../errors.ts';
import { clipMessage } from './bounded-text.ts';

/**
 * What a plan expression sees: `$objective`, `$outputs` and, in a success assertion, `$output`; a compensation's
 * input sees `$input` and `$output` of the step it undoes.
 */
export interface ExpressionBindings {
  readonly objective: string;
  readonly outputs: Record<string, unknown>;
  readonly output?: unknown;
  readonly input?: unknown;
}

export interface ExpressionLimits {
  /** Wall-clock budget of one evaluation request (the expressions one claim or one verification evaluates). */
  readonly timeoutMs: number;
  /** JSONata evaluation depth (nesting of sub-expressions; about three per level of a recursive function). */
  readonly maxDepth: number;
  /** The longest sequence (array) an evaluation may build. */
  readonly maxSequence: number;
  /** The longest string a size-taking built-in (`$pad`) may build. */
  readonly maxStringChars: number;
  /** The heap of the worker that evaluates (only the isolated evaluator applies it). */
  readonly memoryMb: number;
}

export const defaultExpressionLimits = (): ExpressionLimits => ({ ...DEFAULT_EXPRESSION_LIMITS });

/** What one expression of a request gave: its value, or why it has none (`limit`: a bound was hit). */
export type EvaluationOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly limit: boolean; readonly message: string };

/**
 * Several expressions over the same bindings, evaluated together (one message to a worker, one time budget).
 * `sources` are `{% … %}` strings or bare JSONata.
 */
export interface EvaluationRequest {
  readonly sources: readonly string[];
  readonly bindings: ExpressionBindings;
}

/**
 * The JSONata of a source: between `{%` and `%}`, trimmed (the plan schema's EXPRESSION_PATTERN; kept here so the
 * worker loads this module alone), or the source itself.
 */
export const jsonataBody = (source: string): string =>
  source.startsWith('{%') && source.endsWith('%}') && source.length >= 4 ? source.slice(2, -2).trim() : source;

/** JSONata's codes for its own guardrails, and V8's for a string past its maximum length. */
const LIMIT_CODES = new Set(['D1011', 'D1012', 'D2014', 'D2015', 'E_EXPRESSION_LIMIT']);

const CACHE_LIMIT = 2048;

/** Compiled expressions by limits and body: parsing is the costly part, and a worker evaluates the same shapes. */
const compiled = new Map<string, jsonata.Expression>();

function compile(body: string, limits: ExpressionLimits): jsonata.Expression {
  const key = `${limits.timeoutMs}/${limits.maxDepth}/${limits.maxSequence}/${limits.maxStringChars}\n${body}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const expression = jsonata(body, {
    timeout: limits.timeoutMs,
    stack: limits.maxDepth,
    sequence: limits.maxSequence,
  });
  registerBoundedBuiltins(expression, limits);
  if (compiled.size >= CACHE_LIMIT) compiled.clear();
  compiled.set(key, expression);
  return expression;
}

const limitError = (message: string): ExpressionLimitError => new ExpressionLimitError(message);

/**
 * `$pad` with the result's size checked before anything is built (JSONata's own builds it first: `$pad("", 1e8)`
 * takes hundreds of MB). Same semantics otherwise: a negative width pads on the left, the default pad is a space.
 */
function registerBoundedBuiltins(expression: jsonata.Expression, limits: ExpressionLimits): void {
  expression.registerFunction(
    'pad',
    (str: string | undefined, width: number, char?: string): string | undefined => {
      if (str === undefined) return undefined;
      if (Math.abs(width) > limits.maxStringChars)
        throw limitError(`$pad to ${Math.abs(width)} characters is over the limit of ${limits.maxStringChars}`);
      const fill = char === undefined || char.length === 0 ? ' ' : char;
      const chars = Array.from(str);
      const missing = Math.abs(width) - chars.length;
      if (missing <= 0) return str;
      const padding = Array.from(fill.repeat(Math.ceil(missing / Array.from(fill).length)))
        .slice(0, missing)
        .join('');
      return width > 0 ? str + padding : padding + str;
    },
    '<s-ns?:s>',
  );
}

const describe = (error: unknown): { code: string | undefined; message: string } => {
  if (typeof error === 'object' && error !== null) {
    const { message, code, position } = error as { message?: unknown; code?: unknown; position?: unknown };
    const where = typeof position === 'number' ? ` at position ${position}` : '';
    const tag = typeof code === 'string' ? ` [${code}]` : '';
    if (typeof message === 'string')
      return { code: typeof code === 'string' ? code : undefined, message: `${message}${where}${tag}` };
  }
  return { code: undefined, message: String(error) };
};

/** Whether a failure of an evaluation is one of its bounds (then the step fails with E_EXPRESSION_LIMIT). */
export function isLimitFailure(error: unknown): boolean {
  if (error instanceof RangeError) return true; // V8: "Invalid string length", "Invalid array length", stack
  if (error instanceof ExpressionLimitError) return true;
  const { code } = describe(error);
  return code !== undefined && LIMIT_CODES.has(code);
}

/**
 * The outcome of a failed evaluation, with the bound named when one was hit. Its message is bounded where it is made
 * (./bounded-text.ts): `$error($pad("", 9999999))` is a 10 MB message otherwise, carried back from the worker and
 * stored on the step and in the run's evidence.
 */
export function failedOutcome(error: unknown): EvaluationOutcome {
  const limit = isLimitFailure(error);
  const { message } = describe(error);
  return { ok: false, limit, message: clipMessage(limit ? `expression limit: ${message}` : message) };
}

/**
 * JSONata results can be sequences (arrays with extra flags) or carry functions; a JSON round trip leaves plain
 * data, which is also what may cross to another thread.
 */
export function toJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

/** Evaluates one expression (`{% … %}` or bare JSONata) within `limits`; the value is plain JSON (or undefined). */
export async function evaluateBounded(
  source: string,
  bindings: ExpressionBindings,
  limits: ExpressionLimits,
): Promise<unknown> {
  const body = jsonataBody(source);
  const vars: Record<string, unknown> = { objective: bindings.objective, outputs: bindings.outputs };
  if ('output' in bindings) vars.output = bindings.output;
  if ('input' in bindings) vars.input = bindings.input;
  return toJson(await compile(body, limits).evaluate(undefined, vars));
}

/** Evaluates every expression of a request in order; each failure is reported in its place, none throws. */
export async function evaluateRequest(
  request: EvaluationRequest,
  limits: ExpressionLimits,
): Promise<EvaluationOutcome[]> {
  const outcomes: EvaluationOutcome[] = [];
  for (const source of request.sources) {
    try {
      outcomes.push({ ok: true, value: await evaluateBounded(source, request.bindings, limits) });
    } catch (error) {
      outcomes.push(failedOutcome(error));
    }
  }
  return outcomes;
}

/**
 * The bounded evaluation without a worker: the cooperative bounds hold, a native call that runs away or a heap that
 * fills up does not stop. For tests and for tools that evaluate trusted expressions; the services get the isolated
 * evaluator from the composition root.
 */
export function createInProcessEvaluator(limits: ExpressionLimits = defaultExpressionLimits()): {
  evaluate(request: EvaluationRequest): Promise<readonly EvaluationOutcome[]>;
  warm(): Promise<void>;
  close(): Promise<void>;
} {
  return { evaluate: (request) => evaluateRequest(request, limits), warm: async () => {}, close: async () => {} };
}
