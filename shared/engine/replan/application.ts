/**
 * What a plan revision does to the run's step records, in a form that can be finished by whoever comes next.
 *
 * The replanner makes revision n+1 current with one write that also records, on the run, what the revision does to
 * the records (`RevisionApplication`: which records are superseded, which start their next generation from which
 * generation, which steps get a first record). Bringing the records in line is then many writes; any of them can
 * throw (a throttle, a store timeout). So the work left is always worked out again from the recorded application and
 * the records as they are now (`applicationWork`): a repeat finds what already landed and does only the rest, and
 * a record is never moved to a generation twice.
 */
import { effectiveUpstream, type PlanGraph } from '../../plan/graph.ts';
import type { Plan } from '../../plan/schema.ts';
import type { NextGeneration, RestartedRecord, RevisionApplication, StepRecord } from '../../ports/store.ts';
import { FIRST_GENERATION, planTraceText, staleUpstreamReleases, type UpstreamGeneration } from '../scheduling.ts';
import { RELEASING_STEP_STATUSES } from '../statuses.ts';
import { traceEntry } from '../trace.ts';
import type { AppliedReplan } from './apply.ts';

/** The application of `applied`, given the records as they were read before the revision was made. */
export function revisionApplication(applied: AppliedReplan, records: readonly StepRecord[]): RevisionApplication {
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const restarted: RestartedRecord[] = [];
  const added: string[] = [];
  for (const id of [...applied.changed, ...applied.added]) {
    const existing = byId.get(id);
    if (existing) restarted.push({ stepId: id, from: existing.generation });
    else added.push(id);
  }
  return { removed: [...applied.removed], restarted, added };
}

/** The writes an application still needs, as the records are now. */
export interface ApplicationWork {
  /** Records to supersede (the service re-reads one whose status moved under it). */
  readonly supersede: readonly StepRecord[];
  /** Records still at the generation the revision restarts from, and how their next generation starts. */
  readonly restart: readonly { readonly step: StepRecord; readonly next: NextGeneration }[];
  /** First records of added steps that have none yet. */
  readonly create: readonly StepRecord[];
  /** Every step the revision starts afresh (restarted or added), done or not. */
  readonly fresh: ReadonlySet<string>;
}

/**
 * How a restarted or added step starts: finished upstream steps that go on as they are count as released. Which late
 * releases count nothing is `staleUpstreamReleases`, the rule an invalidation's next generations follow: an upstream
 * step the revision restarts too (`restartedFrom`: the generation it restarts from) is waited for in its next
 * generation, so a late release of the one it restarts from is stale; one the revision keeps that has not finished
 * is waited for in the generation it is in (an invalidation may have moved it, and its ended generation's release
 * may still come), so the one before is stale. A step the revision adds has no earlier generation to name.
 */
export function nextGeneration(
  graph: PlanGraph,
  stepId: string,
  byId: ReadonlyMap<string, Pick<StepRecord, 'status' | 'generation'>>,
  fresh: ReadonlySet<string>,
  restartedFrom: ReadonlyMap<string, number> = new Map(),
): NextGeneration {
  const upstream = effectiveUpstream(graph, stepId);
  const released = upstream.filter((id) => {
    const status = byId.get(id)?.status;
    return !fresh.has(id) && status !== undefined && RELEASING_STEP_STATUSES.has(status);
  });
  const remaining = upstream.length - released.length;
  const stale = staleUpstreamReleases(upstream, released, (id): UpstreamGeneration | undefined => {
    const from = restartedFrom.get(id);
    if (from !== undefined) return { moves: true, generation: from };
    const record = byId.get(id);
    return fresh.has(id) || record === undefined ? undefined : { moves: false, generation: record.generation };
  });
  return {
    status: remaining === 0 ? 'ready' : 'pending',
    upstream,
    remaining,
    released,
    ...(stale === undefined ? {} : { staleReleases: stale }),
  };
}

export interface ApplicationInput {
  readonly runId: string;
  readonly application: RevisionApplication;
  /** The graph of the revision being applied. */
  readonly graph: PlanGraph;
  /** The run's step records as read now. */
  readonly records: readonly StepRecord[];
  /** The revision being applied: its steps, rationale and number go into each fresh generation's `[plan]` trace. */
  readonly plan: Pick<Plan, 'steps' | 'rationale' | 'revision'>;
  readonly now: string;
}

/** What is left to write of an application: nothing that already landed is written again. */
export function applicationWork(input: ApplicationInput): ApplicationWork {
  const { application, graph, records, now } = input;
  const byId = new Map(records.map((r) => [r.stepId, r]));
  const fresh = new Set([...application.restarted.map((r) => r.stepId), ...application.added]);
  const restartedFrom = new Map(application.restarted.map((r) => [r.stepId, r.from]));
  const definitions = new Map(input.plan.steps.map((s) => [s.id, s]));
  const planned = (id: string) => traceEntry('plan', planTraceText(id, definitions.get(id), input.plan), now);
  const supersede = application.removed.flatMap((id) => {
    const step = byId.get(id);
    return step && step.status !== 'superseded' && !RELEASING_STEP_STATUSES.has(step.status) ? [step] : [];
  });
  const restart = application.restarted.flatMap(({ stepId, from }) => {
    const step = byId.get(stepId);
    // A later generation means this restart (or a newer one) already landed.
    return step?.generation === from
      ? [
          {
            step,
            next: { ...nextGeneration(graph, stepId, byId, fresh, restartedFrom), appendTrace: [planned(stepId)] },
          },
        ]
      : [];
  });
  const create = application.added.flatMap((id): StepRecord[] => {
    if (byId.has(id)) return [];
    return [
      {
        runId: input.runId,
        stepId: id,
        generation: FIRST_GENERATION,
        // An upstream step the revision restarts: its restarted-from generation's late release counts nothing here.
        ...nextGeneration(graph, id, byId, fresh, restartedFrom),
        attempts: 0,
        trace: [planned(id)],
        updatedAt: now,
      },
    ];
  });
  return { supersede, restart, create, fresh };
}
