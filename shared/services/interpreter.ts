/**
 * What every step action shares: the clock, and reading a run and a step with the run's (immutable, hence cached)
 * plan revision. Nothing here writes a run's facts: the run's decider does (shared/engine/run), through its shell.
 */
import { dependentsOf, planGraph } from '../engine/scheduling.ts';
import { NotFoundError } from '../errors.ts';
import { clipMessage, messageOf } from '../plan/bounded-text.ts';
import type { PlanGraph } from '../plan/graph.ts';
import { type Plan, type PlanStep, stepKind } from '../plan/schema.ts';
import type { AttemptRecord, AttemptRef, RunRecord, StepRecord } from '../ports/store.ts';
import type { CoordinatorDeps, StepKindName } from './coordinator-types.ts';

export interface LoadedPlan {
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly byId: ReadonlyMap<string, PlanStep>;
  /** Executable steps nothing waits for: a run can only be over once each of them is. */
  readonly sinks: readonly string[];
}

export interface Interpreter {
  readonly deps: CoordinatorDeps;
  /** The current time as an ISO string. */
  now(): string;
  getRun(runId: string): Promise<RunRecord>;
  /**
   * The run and one of its steps (and, if asked, one attempt), in one consistent read; throws NotFoundError for an
   * unknown run, like `getRun`.
   */
  loadStep(runId: string, stepId: string, attempt?: AttemptRef): Promise<LoadedStep>;
  /** The run's current plan revision (or the one named); throws NotFoundError when it has none yet. */
  plan(run: Pick<RunRecord, 'runId' | 'revision'>): Promise<LoadedPlan>;
  /** A revision this process has loaded already, without I/O (undefined when it has not). */
  cachedPlan(runId: string, revision: number): LoadedPlan | undefined;
}

export interface LoadedStep {
  readonly run: RunRecord;
  readonly step: StepRecord | undefined;
  readonly attempt: AttemptRecord | undefined;
}

// Plan revisions never change once written, so a warm Lambda keeps the ones it has read.
const PLAN_CACHE_LIMIT = 64;

export function createInterpreter(deps: CoordinatorDeps): Interpreter {
  const plans = new Map<string, LoadedPlan>();
  const loadPlan = async (run: Pick<RunRecord, 'runId' | 'revision'>): Promise<LoadedPlan> => {
    const key = `${run.runId}#${run.revision}`;
    const cached = plans.get(key);
    if (cached) return cached;
    const stored = await deps.store.getPlanRevision(run.runId, run.revision);
    if (!stored)
      throw new NotFoundError(`run ${run.runId} has no plan revision ${run.revision}`, {
        context: { runId: run.runId },
      });
    const graph = planGraph(stored.plan);
    const loaded: LoadedPlan = {
      plan: stored.plan,
      graph,
      byId: new Map(stored.plan.steps.map((s) => [s.id, s])),
      sinks: graph.executableIds().filter((id) => dependentsOf(graph, id).length === 0),
    };
    if (plans.size >= PLAN_CACHE_LIMIT) plans.delete(plans.keys().next().value ?? '');
    plans.set(key, loaded);
    return loaded;
  };

  return {
    deps,
    now: () => deps.clock().toISOString(),
    async getRun(runId) {
      const run = await deps.store.getRun(runId);
      if (!run) throw new NotFoundError(`run ${runId} does not exist`, { context: { runId } });
      return run;
    },
    async loadStep(runId, stepId, attempt) {
      const found = await deps.store.getStepWithRun(runId, stepId, attempt);
      if (!found.run) throw new NotFoundError(`run ${runId} does not exist`, { context: { runId } });
      return { run: found.run, step: found.step, attempt: found.attempt };
    },
    plan: loadPlan,
    cachedPlan: (runId, revision) => plans.get(`${runId}#${revision}`),
  };
}

/** The kind of an executable step (groups have no step record and never reach the coordinator's step actions). */
export function kindOf(step: PlanStep | undefined): StepKindName {
  const kind = step ? stepKind(step) : 'tool';
  return kind === 'group' ? 'tool' : kind;
}

/** A step record that belongs to the generation a request speaks for. */
export const isCurrent = (step: StepRecord | undefined, generation: number): step is StepRecord =>
  step !== undefined && step.generation === generation;

/** A plain `{ code, message }` view of whatever a workflow passed as an error (SFN `{ Error, Cause }`, an Error...). */
export function describeWorkflowError(error: unknown): { code: string; message: string } {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    const code = [record.Error, record.code, record.name].find((v) => typeof v === 'string') as string | undefined;
    let message = [record.Cause, record.message].find((v) => typeof v === 'string') as string | undefined;
    if (message !== undefined) {
      try {
        const parsed = JSON.parse(message) as { errorMessage?: unknown };
        if (typeof parsed?.errorMessage === 'string') message = parsed.errorMessage;
      } catch {
        // a plain-text cause
      }
    }
    // A Cause may be a planner's whole answer (up to Step Functions' 32 KB): the run's evidence keeps it bounded.
    return { code: clipMessage(code ?? 'E_UNKNOWN', 200), message: messageOf(message ?? JSON.stringify(error)) };
  }
  return { code: 'E_UNKNOWN', message: error === undefined ? 'no error given' : messageOf(error) };
}
