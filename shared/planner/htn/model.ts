/**
 * The embedded default model: the deterministic HTN planner behind the model port. No network, no clock, no
 * randomness: the same objective, catalog and limits always give the same plan, byte for byte.
 */
import type { PlanModel, PlanModelRequest } from '../../ports/plan-model.ts';
import { type Decomposition, decompose } from './engine.ts';
import { DEMO_METHODS } from './methods/demo.ts';
import type { DecomposeOptions, Method } from './types.ts';

export interface HtnPlanModelOptions {
  /** The method library; default: the demo library. */
  readonly methods?: readonly Method[];
  /** How a request turns into decomposition options (a replan will derive them from `diagnosis`). */
  readonly optionsFor?: (request: PlanModelRequest) => DecomposeOptions;
}

export interface HtnPlanModel extends PlanModel {
  /** The plan and the method chosen for every compound task (what a replan varies). */
  decompose(request: PlanModelRequest): Decomposition;
}

export function createHtnPlanModel(options: HtnPlanModelOptions = {}): HtnPlanModel {
  const methods = options.methods ?? DEMO_METHODS;
  const run = (request: PlanModelRequest): Decomposition =>
    decompose({
      objective: request.objective,
      catalog: request.catalog,
      limits: request.limits,
      methods,
      options: options.optionsFor?.(request) ?? {},
    });
  return {
    name: 'htn',
    decompose: run,
    proposePlan: async (request) => run(request).plan,
  };
}
