/**
 * The embedded default model: the deterministic HTN planner behind the model port. No network, no clock, no
 * randomness: the same objective, catalog and limits always give the same plan, byte for byte. A request with a
 * previous plan and a diagnosis is a replan (planner/replan/htn-replan.ts), just as deterministic.
 */
import type { PlanModel, PlanModelRequest, ReplanProposal } from '../../ports/plan-model.ts';
import { type HtnReplanResult, htnReplan } from '../replan/htn-replan.ts';
import { type Decomposition, decompose } from './engine.ts';
import { DEMO_METHODS } from './methods/demo.ts';
import type { DecomposeOptions, Method } from './types.ts';

export interface HtnPlanModelOptions {
  /** The method library; default: the demo library. */
  readonly methods?: readonly Method[];
  /** How a first-plan request turns into decomposition options. */
  readonly optionsFor?: (request: PlanModelRequest) => DecomposeOptions;
}

export interface HtnPlanModel extends PlanModel {
  /** The plan and the method chosen for every compound task (what a replan varies). */
  decompose(request: PlanModelRequest): Decomposition;
  /** A replan of `request.previousPlan` around `request.diagnosis`, with what it changed. */
  replan(request: PlanModelRequest): HtnReplanResult;
  proposeReplan(request: PlanModelRequest): Promise<ReplanProposal>;
}

const isReplan = (request: PlanModelRequest): boolean =>
  request.previousPlan !== undefined &&
  (request.diagnosis !== undefined || request.requested !== undefined || request.budget !== undefined);

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
  const replan = (request: PlanModelRequest): HtnReplanResult => htnReplan(request, methods);
  return {
    name: 'htn',
    decompose: run,
    replan,
    proposePlan: async (request) => (isReplan(request) ? replan(request).plan : run(request).plan),
    proposeReplan: async (request) => {
      const { plan, change, replaces } = replan(request);
      return { plan, change, replaces };
    },
  };
}
