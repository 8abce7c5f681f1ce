/**
 * Where plan expressions are evaluated. A plan's JSONata is code written by whoever wrote the plan (a person or a
 * model), so it runs where it cannot block the engine's event loop or take its memory: the composition root passes
 * a worker-backed evaluator (shared/adapters/expressions). Every evaluation is bounded (shared/plan/expression-limits.ts);
 * a bound that is hit comes back as an outcome with `limit: true`, never as a thrown error.
 */
import type { EvaluationOutcome, EvaluationRequest } from '../plan/expression-limits.ts';

export type { EvaluationOutcome, EvaluationRequest } from '../plan/expression-limits.ts';

export interface ExpressionEvaluator {
  /** One outcome per source, in order. The sources share one time budget. */
  evaluate(request: EvaluationRequest): Promise<readonly EvaluationOutcome[]>;
  /** Gets ready to evaluate (starts the workers) without waiting for a first request; resolves once ready. */
  warm(): Promise<void>;
  /** Stops whatever the evaluator holds (workers); later evaluations start it again. */
  close(): Promise<void>;
}
