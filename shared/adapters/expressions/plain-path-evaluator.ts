/**
 * An ExpressionEvaluator that answers plain lookups (`$objective`, `$outputs.a.value`, an array of such paths:
 * shared/plan/plain-paths.ts says which and why that is safe) in process, and sends only the rest of a request to
 * the evaluator it wraps (the sandbox's worker processes), in one request as before. A claim whose input is only
 * lookups makes no round trip to a worker at all.
 */
import type { EvaluationOutcome } from '../../plan/expression-limits.ts';
import { evaluatePlain, type PlainExpression, parsePlainExpression } from '../../plan/plain-paths.ts';
import type { ExpressionEvaluator } from '../../ports/expressions.ts';

const CACHE_LIMIT = 4096;
/** Parsed forms by source text (null: not plain); plans repeat their expressions on every claim. */
const parsed = new Map<string, PlainExpression | null>();

function plainForm(source: string): PlainExpression | undefined {
  let form = parsed.get(source);
  if (form === undefined) {
    form = parsePlainExpression(source) ?? null;
    if (parsed.size >= CACHE_LIMIT) parsed.clear();
    parsed.set(source, form);
  }
  return form ?? undefined;
}

export function withPlainPaths(inner: ExpressionEvaluator): ExpressionEvaluator {
  return {
    async evaluate(request) {
      const answered = request.sources.map((source) => {
        const form = plainForm(source);
        return form === undefined ? undefined : evaluatePlain(form, request.bindings);
      });
      const rest = request.sources.filter((_, i) => answered[i] === undefined);
      const outcomes = rest.length === 0 ? [] : await inner.evaluate({ sources: rest, bindings: request.bindings });
      let next = 0;
      return answered.map((answer): EvaluationOutcome => {
        if (answer !== undefined) return { ok: true, value: answer.value };
        const outcome = outcomes[next];
        next += 1;
        return outcome ?? { ok: false, limit: false, message: 'no outcome' };
      });
    },
    warm: () => inner.warm(),
    close: () => inner.close(),
  };
}
