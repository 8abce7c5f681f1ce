/**
 * The interpreter's primitives, what every service action shares: the clock, reading a run with its (immutable,
 * hence cached) plan revision, and writing a transition with the events that announce it (the outbox: they travel
 * with the write that makes the change). Services load through it, ask the engine, write through it.
 */
import { dependentsOf, planGraph } from '../engine/scheduling.ts';
import { NotFoundError } from '../errors.ts';
import { boundedDetail } from '../events/bounded-details.ts';
import type { EventDetail, EventType } from '../events/catalog.ts';
import type { OutboxEntry } from '../events/outbox.ts';
import { clipMessage, messageOf } from '../plan/bounded-text.ts';
import type { PlanGraph } from '../plan/graph.ts';
import type { RunStatus } from '../plan/schema.ts';
import { type Plan, type PlanStep, stepKind } from '../plan/schema.ts';
import type {
  AttemptRecord,
  AttemptRef,
  RunRecord,
  RunRemovableField,
  StepPatch,
  StepRecord,
  Store,
} from '../ports/store.ts';
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
  /**
   * An announcement of `events` for a write that makes the change they announce (the outbox: the events land with
   * that write or not at all). Writes through `transitionStep` / `updateRun` below also count the events' metrics.
   */
  announce(runId: string, events: readonly RunEvent[]): OutboxEntry;
  /** Announces events that belong to no other write, in an outbox item of their own. */
  emit(runId: string, events: readonly RunEvent[]): Promise<void>;
  /** Store.transitionStep with `events` announced by the same write. */
  transitionStep(
    runId: string,
    stepId: string,
    condition: Parameters<Store['transitionStep']>[2],
    patch: StepPatch,
    events?: readonly RunEvent[],
  ): Promise<StepRecord | undefined>;
  /** Store.updateRun with `events` announced by the same write. */
  updateRun(
    runId: string,
    from: readonly RunStatus[],
    patch: Parameters<Store['updateRun']>[2],
    options?: { readonly remove?: readonly RunRemovableField[]; readonly events?: readonly RunEvent[] },
  ): Promise<RunRecord | undefined>;
}

export interface LoadedStep {
  readonly run: RunRecord;
  readonly step: StepRecord | undefined;
  readonly attempt: AttemptRecord | undefined;
}

/**
 * Builds one event with its detail checked against the event catalog's type, and bounded: an error travels as the
 * catalog's fields with its message clipped (events/bounded-details.ts), whatever the step's record keeps.
 */
export const event = <T extends EventType>(type: T, detail: EventDetail<T>): RunEvent<T> => ({
  type,
  detail: boundedDetail(detail),
});

// Plan revisions never change once written, so a warm Lambda keeps the ones it has read.
const PLAN_CACHE_LIMIT = 64;

export function createInterpreter(deps: CoordinatorDeps): Interpreter {
  const plans = new Map<string, LoadedPlan>();
  const announce = (runId: string, events: readonly RunEvent[]): OutboxEntry => ({
    id: deps.newId(),
    runId,
    at: deps.clock().toISOString(),
    events,
  });
  /** Metrics count what happened: an announcement whose write landed. */
  const counted = (entry: OutboxEntry): void => {
    if (deps.metrics)
      countEventMetrics(deps.metrics, entry.events, (stepId) => cachedTarget(plans, entry.runId, stepId));
  };

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
    announce,
    async emit(runId, events) {
      if (events.length === 0) return;
      const entry = announce(runId, events);
      await deps.store.announce(entry);
      counted(entry);
    },
    async transitionStep(runId, stepId, condition, patch, events = []) {
      const entry = events.length === 0 ? undefined : announce(runId, events);
      const moved = await deps.store.transitionStep(runId, stepId, condition, patch, entry);
      if (moved && entry) counted(entry);
      return moved;
    },
    async updateRun(runId, from, patch, options = {}) {
      const { events = [], remove } = options;
      const entry = events.length === 0 ? undefined : announce(runId, events);
      const updated = await deps.store.updateRun(runId, from, patch, {
        ...(remove === undefined ? {} : { remove }),
        ...(entry === undefined ? {} : { announce: entry }),
      });
      if (updated && entry) counted(entry);
      return updated;
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
