/**
 * A step's brief: what a step execution needs from its run's plan, handed to it in its execution's input when the
 * decider starts it, so that the step's path reads no plan. Every cold container of a 2,000-wide layer reading the
 * whole plan revision (consistently, from one partition key) would be 2,000 reads of the largest item the run has;
 * the brief costs nothing to read and a few hundred bytes of the start it rides on.
 *
 * It holds the step's own definition (less what only people, the invalidator and the decider read), the upstream
 * steps whose outputs its expressions bind (`$outputs`), the ones it directly waits for and the plan's budget. A
 * generation's definition and upstream never change under it: a revision that changes either starts a new
 * generation (engine/replan/apply.ts), with a new brief. The plan's budget is the revision's, so the brief names its
 * revision. A brief that would not fit (a huge inline input) is not sent: that step's execution reads the plan.
 */

import { z } from 'zod';
import { utf8Bytes } from '../../events/put-events.ts';
import { namedOutputSteps } from '../../plan/bound-outputs.ts';
import { containsExpression } from '../../plan/expressions.ts';
import { effectiveUpstream, type PlanGraph, upstreamClosure } from '../../plan/graph.ts';
import { type Budget, budgetSchema, type Plan, type PlanStep, planStepSchema } from '../../plan/schema.ts';

export interface StepBrief {
  /** The plan revision it was taken from (its budget is that revision's). */
  readonly revision: number;
  /** The step's definition, less `BRIEF_LEFT_OUT`. */
  readonly step: PlanStep;
  /** The steps it directly waits for (effective: groups resolved to their steps). */
  readonly upstream: readonly string[];
  /** The upstream steps whose outputs `$outputs` binds for it (none when no expression of it binds `$outputs`). */
  readonly outputs: readonly string[];
  readonly budget?: Budget;
}

/** A brief as an execution's payload carries it (checked at the edge: functions/step-executor.ts, coordinator.ts). */
export const stepBriefSchema = z.object({
  revision: z.number().int().min(1),
  step: planStepSchema,
  upstream: z.array(z.string()),
  outputs: z.array(z.string()),
  budget: budgetSchema.optional(),
});

/**
 * Where a Task's payload carries the brief: `started`, the execution's input (`$$.Execution.Input`, without its
 * decision and last answer: infra/constructs/state-machines.ts), whose `brief` an execution started by an older
 * decider lacks; or `brief` (`$.brief`), as the definition before it sent it. A JSONPath to a field that may be
 * missing fails the execution (States.Runtime); the execution's input always exists.
 */
export const briefPayloadFields = {
  brief: stepBriefSchema.nullish(),
  started: z.object({ brief: stepBriefSchema.nullish() }).passthrough().nullish(),
};

/** The brief a Task's payload carries (`briefPayloadFields`): null when its execution was started without one. */
export const sentBrief = (payload: {
  readonly brief?: StepBrief | null | undefined;
  readonly started?: { readonly brief?: StepBrief | null | undefined } | null | undefined;
}): StepBrief | null => payload.brief ?? payload.started?.brief ?? null;

/**
 * What a brief leaves out of the definition: read by people (metadata, the rollback hint), the invalidator (watches)
 * and the planner (the estimate), never by the step's execution.
 */
export const BRIEF_LEFT_OUT = ['metadata', 'watches', 'rollbackHint', 'estimatedDurationSeconds'] as const;

/**
 * The largest brief sent, in bytes of JSON. A step execution's state keeps 96 KB beside a person's decision
 * (api/approvals.ts MAX_DECISION_BYTES), of which two error Causes may take 32 KB each: a brief stays well inside
 * what is left. A normal step's brief is a few hundred bytes.
 */
export const MAX_BRIEF_BYTES = 16 * 1024;

/** What a brief is made from: a plan revision with its graph (the decider's PlanView, a loaded plan). */
export interface BriefSource {
  readonly plan: Pick<Plan, 'revision' | 'budget'>;
  readonly graph: PlanGraph;
  readonly byId: ReadonlyMap<string, PlanStep>;
}

/** Whether anything of the step binds `$outputs`: its `when`, its input or its success assertion. */
export const needsOutputs = (planStep: PlanStep): boolean =>
  planStep.when !== undefined || containsExpression(planStep.input) || planStep.successCriteria?.assert !== undefined;

/**
 * The executable steps a step transitively waits for whose outputs `$outputs` binds: all of them, or, given the
 * step's definition, only those its expressions can read (../../plan/bound-outputs.ts).
 */
export function upstreamStepIds(graph: PlanGraph, stepId: string, definition?: PlanStep): string[] {
  const closure = [...upstreamClosure(graph, stepId)].filter((id) => graph.has(id) && !graph.isGroup(id));
  const named = definition === undefined ? undefined : namedOutputSteps(definition);
  return named === undefined ? closure : closure.filter((id) => named.has(id));
}

function definitionOf(step: PlanStep): PlanStep {
  const kept: Record<string, unknown> = { ...step };
  for (const field of BRIEF_LEFT_OUT) delete kept[field];
  return kept as PlanStep;
}

/** The brief of `stepId` in `source`, whatever its size (undefined for a step the revision lacks). */
export function briefOf(source: BriefSource, stepId: string): StepBrief | undefined {
  const definition = source.byId.get(stepId);
  if (definition === undefined) return undefined;
  const { budget } = source.plan;
  return {
    revision: source.plan.revision,
    step: definitionOf(definition),
    upstream: effectiveUpstream(source.graph, stepId),
    outputs: needsOutputs(definition) ? upstreamStepIds(source.graph, stepId, definition) : [],
    ...(budget === undefined ? {} : { budget }),
  };
}

/** The brief a step's execution starts with: null when there is none to send (no such step, or too large). */
export function stepBrief(source: BriefSource | undefined, stepId: string): StepBrief | null {
  const brief = source === undefined ? undefined : briefOf(source, stepId);
  if (brief === undefined) return null;
  return utf8Bytes(JSON.stringify(brief)) <= MAX_BRIEF_BYTES ? brief : null;
}

/** Every step record the step's evaluation may read: the bound upstream outputs and the direct upstream steps. */
export const briefContext = (brief: Pick<StepBrief, 'upstream' | 'outputs'>): string[] => [
  ...new Set([...brief.outputs, ...brief.upstream]),
];
