/**
 * What every coordinator action shares: the clock, reading a run with its (immutable, hence cached) plan revision,
 * and writing run events (the audit log) and publishing the same as domain events.
 */
import { dependentsOf, planGraph } from '../engine/scheduling.ts';
import { NotFoundError } from '../errors.ts';
import type { EventDetail, EventType } from '../events/catalog.ts';
import type { PlanGraph } from '../plan/graph.ts';
import { type Plan, type PlanStep, stepKind } from '../plan/schema.ts';
import type { DomainEvent } from '../ports/events.ts';
import type { AttemptRecord, AttemptRef, NewRunEvent, RunRecord, StepRecord } from '../ports/store.ts';
import { countEventMetrics } from './coordinator-metrics.ts';
import type { CoordinatorDeps, StepKindName } from './coordinator-types.ts';

export interface LoadedPlan {
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly byId: ReadonlyMap<string, PlanStep>;
  /** Executable steps nothing waits for: a run can only be over once each of them is. */
  readonly sinks: readonly string[];
}

export interface RunEvent<T extends EventType = EventType> {
  readonly type: T;
  readonly detail: EventDetail<T>;
}

export interface Ctx {
  readonly deps: CoordinatorDeps;
  /** The current time as an ISO string. */
  now(): string;
  getRun(runId: string): Promise<RunRecord>;
  /**
   * The run and one of its steps (and, if asked, one attempt), in one consistent read; throws NotFoundError for an
   * unknown run, like `getRun`.
   */
  loadStep(runId: string, stepId: string, attempt?: AttemptRef): Promise<LoadedStep>;
  /** The run's current plan revision; throws NotFoundError when it has none yet. */
  plan(run: RunRecord): Promise<LoadedPlan>;
  /** A revision this process has loaded already, without I/O (undefined when it has not). */
  cachedPlan(runId: string, revision: number): LoadedPlan | undefined;
  emit(runId: string, events: readonly RunEvent[]): Promise<void>;
}

export interface LoadedStep {
  readonly run: RunRecord;
  readonly step: StepRecord | undefined;
  readonly attempt: AttemptRecord | undefined;
}

/** Builds one event with its detail checked against the event catalog's type. */
export const event = <T extends EventType>(type: T, detail: EventDetail<T>): RunEvent<T> => ({ type, detail });

// Plan revisions never change once written, so a warm Lambda keeps the ones it has read.
const PLAN_CACHE_LIMIT = 64;

export function createContext(deps: CoordinatorDeps): Ctx {
  const plans = new Map<string, LoadedPlan>();

  const loadPlan = async (run: RunRecord): Promise<LoadedPlan> => {
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
    async emit(runId, events) {
      if (events.length === 0) return;
      if (deps.metrics) countEventMetrics(deps.metrics, events, (stepId) => cachedTarget(plans, runId, stepId));
      const at = deps.clock().toISOString();
      const records: NewRunEvent[] = events.map((e) => {
        const detail = e.detail as Readonly<Record<string, unknown>>;
        const stepId = typeof detail.stepId === 'string' ? detail.stepId : undefined;
        const generation = typeof detail.generation === 'number' ? detail.generation : undefined;
        return {
          runId,
          type: e.type,
          at,
          ...(stepId === undefined ? {} : { stepId }),
          ...(generation === undefined ? {} : { generation }),
          detail,
        };
      });
      await deps.store.appendEvents(records);
      const domain: DomainEvent[] = events.map((e) => ({ detailType: e.type, detail: { ...e.detail, at } }));
      await publishWithRetry(deps, runId, domain);
    },
  };
}

/** A step's capability from the newest cached revision of its run's plan (no store read just for a metric). */
function cachedTarget(plans: ReadonlyMap<string, LoadedPlan>, runId: string, stepId: string): string | undefined {
  let newest: { revision: number; loaded: LoadedPlan } | undefined;
  for (const [key, loaded] of plans) {
    const at = key.lastIndexOf('#');
    const revision = Number(key.slice(at + 1));
    if (key.slice(0, at) === runId && (newest === undefined || revision > newest.revision))
      newest = { revision, loaded };
  }
  return newest?.loaded.byId.get(stepId)?.target ?? undefined;
}

const PUBLISH_TRIES = 3;

/**
 * Publishes, retrying a few times in place: the action that wrote the state change will not write it again when
 * repeated, so it would not publish again either. A notification still lost after that is logged; the change itself
 * stays in the run's event log and is never undone for it.
 */
async function publishWithRetry(deps: CoordinatorDeps, runId: string, events: readonly DomainEvent[]): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await deps.events.publish(events);
      return;
    } catch (error) {
      if (tries >= PUBLISH_TRIES) {
        console.error('cairn coordinator: publishing events failed', {
          runId,
          types: events.map((e) => e.detailType),
          error,
        });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * tries));
    }
  }
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
    return { code: code ?? 'E_UNKNOWN', message: message ?? JSON.stringify(error).slice(0, 1000) };
  }
  return { code: 'E_UNKNOWN', message: error === undefined ? 'no error given' : String(error) };
}
