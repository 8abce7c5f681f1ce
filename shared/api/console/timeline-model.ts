/**
 * The data behind the console's Gantt view: one row per executable step of the current plan (dependencies first)
 * with its planned slot (earliest start by `estimatedDurationSeconds` along its effective dependencies), its attempts
 * (retries are separate bars) and its approval waits, plus two critical paths: the planned one (estimates only) and
 * the actual one (measuredPath: the chain of steps the run's last moment waited on, as they ran).
 */
import { buildGraph, criticalPath, effectiveUpstream, topologicalOrder } from '../../plan/graph.ts';
import type { Plan, StepError, StepStatus } from '../../plan/schema.ts';
import type { ApprovalRecord, AttemptRecord, RunRecord, StepRecord } from '../../ports/store.ts';

export interface TimelineAttempt {
  readonly generation: number;
  readonly attempt: number;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly outcome: AttemptRecord['outcome'];
  readonly error: StepError | null;
}

export interface TimelineWait {
  readonly approvalId: string;
  readonly kind: ApprovalRecord['kind'];
  readonly status: ApprovalRecord['status'];
  readonly from: string;
  /** When the decision (or the expiry) ended the wait; null while it is still pending. */
  readonly to: string | null;
  readonly deadline: string;
}

export interface TimelineRow {
  readonly id: string;
  readonly title: string;
  readonly target: string;
  readonly parentId: string | null;
  readonly status: StepStatus;
  readonly estimatedSeconds: number | null;
  /** Seconds after the run started at which the plan expects this step to start (0 for a step with no upstream). */
  readonly plannedStartSeconds: number;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly attempts: readonly TimelineAttempt[];
  readonly waits: readonly TimelineWait[];
}

export interface PathView {
  readonly steps: readonly string[];
  readonly seconds: number;
}

export interface Timeline {
  readonly runId: string;
  readonly revision: number;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly now: string;
  readonly rows: readonly TimelineRow[];
  readonly criticalPath: { readonly planned: PathView; readonly actual: PathView };
}

export interface TimelineInput {
  readonly run: RunRecord;
  readonly plan: Plan | undefined;
  readonly records: readonly StepRecord[];
  readonly attempts: readonly AttemptRecord[];
  readonly approvals: readonly ApprovalRecord[];
  readonly now: Date;
}

const TERMINAL_RUN = new Set(['complete', 'failed', 'cancelled']);

const finitePath = (path: { steps: string[]; seconds: number }): PathView =>
  Number.isFinite(path.seconds) ? path : { steps: [], seconds: 0 };

function waitOf(approval: ApprovalRecord): TimelineWait {
  const end = approval.decidedAt ?? (approval.status === 'expired' ? approval.deadline : null);
  return {
    approvalId: approval.approvalId,
    kind: approval.kind,
    status: approval.status,
    from: approval.createdAt,
    to: end,
    deadline: approval.deadline,
  };
}

const byAttempt = (a: AttemptRecord, b: AttemptRecord): number => a.generation - b.generation || a.attempt - b.attempt;

/**
 * The critical path of what happened: from the step that ended last (a running one ends now), back through the
 * upstream step that ended last before it, and so on; its seconds are the steps' own durations along that chain.
 * Only steps that started count: a step that was blocked, skipped, cancelled or never reached took no time, so
 * the path can never be longer than the run (estimates belong to the planned path).
 */
export function measuredPath(
  order: readonly string[],
  upstreamOf: (id: string) => readonly string[],
  recordOf: ReadonlyMap<string, StepRecord>,
  end: string,
): PathView {
  const span = new Map<string, { from: number; to: number }>();
  for (const id of order) {
    const record = recordOf.get(id);
    if (!record?.startedAt) continue;
    const from = Date.parse(record.startedAt);
    const to = Date.parse(record.finishedAt ?? end);
    if (Number.isFinite(from) && Number.isFinite(to)) span.set(id, { from, to: Math.max(from, to) });
  }
  const later = (a: string, b: string | undefined): boolean =>
    b === undefined || (span.get(a)?.to ?? 0) > (span.get(b)?.to ?? 0);
  let last: string | undefined;
  for (const id of order) if (span.has(id) && later(id, last)) last = id;
  const steps: string[] = [];
  let ms = 0;
  const seen = new Set<string>();
  for (let at = last; at !== undefined && !seen.has(at); ) {
    seen.add(at);
    const own = span.get(at);
    if (!own) break;
    steps.push(at);
    ms += own.to - own.from;
    // The upstream the step waited for: the one that ended last.
    let via: string | undefined;
    for (const up of upstreamOf(at)) if (span.has(up) && later(up, via)) via = up;
    at = via;
  }
  return { steps: steps.reverse(), seconds: ms / 1000 };
}

export function buildTimeline(input: TimelineInput): Timeline {
  const { run, plan, records, now } = input;
  const nowIso = now.toISOString();
  const finishedAt = TERMINAL_RUN.has(run.status) ? (run.terminal?.at ?? run.updatedAt) : null;
  const base = { runId: run.runId, revision: run.revision, startedAt: run.createdAt, finishedAt, now: nowIso };
  if (!plan)
    return {
      ...base,
      rows: [],
      criticalPath: { planned: { steps: [], seconds: 0 }, actual: { steps: [], seconds: 0 } },
    };

  const live = plan.steps.filter((s) => s.status !== 'superseded');
  const graph = buildGraph(live);
  const byId = new Map(live.map((s) => [s.id, s]));
  const recordOf = new Map(records.map((r) => [r.stepId, r]));
  const estimate = (id: string): number => byId.get(id)?.estimatedDurationSeconds ?? 0;

  const order = (topologicalOrder(graph) ?? live.map((s) => s.id)).filter((id) => !graph.isGroup(id));
  const plannedStart = new Map<string, number>();
  for (const id of order) {
    let start = 0;
    for (const up of effectiveUpstream(graph, id)) start = Math.max(start, (plannedStart.get(up) ?? 0) + estimate(up));
    plannedStart.set(id, start);
  }

  const attemptsOf = new Map<string, AttemptRecord[]>();
  for (const attempt of input.attempts) {
    const list = attemptsOf.get(attempt.stepId) ?? [];
    list.push(attempt);
    attemptsOf.set(attempt.stepId, list);
  }
  const waitsOf = new Map<string, TimelineWait[]>();
  for (const approval of input.approvals) {
    const list = waitsOf.get(approval.stepId) ?? [];
    list.push(waitOf(approval));
    waitsOf.set(approval.stepId, list);
  }

  const rows = order.map((id): TimelineRow => {
    const step = byId.get(id);
    const record = recordOf.get(id);
    return {
      id,
      title: step?.title ?? id,
      target: step?.target ?? '',
      parentId: step?.parentId ?? null,
      status: record?.status ?? 'pending',
      estimatedSeconds: step?.estimatedDurationSeconds ?? null,
      plannedStartSeconds: plannedStart.get(id) ?? 0,
      startedAt: record?.startedAt ?? null,
      finishedAt: record?.finishedAt ?? null,
      attempts: (attemptsOf.get(id) ?? []).sort(byAttempt).map((a) => ({
        generation: a.generation,
        attempt: a.attempt,
        startedAt: a.startedAt,
        finishedAt: a.finishedAt ?? null,
        outcome: a.outcome,
        error: a.error ?? null,
      })),
      waits: (waitsOf.get(id) ?? []).sort((a, b) => a.from.localeCompare(b.from)),
    };
  });

  return {
    ...base,
    rows,
    criticalPath: {
      planned: finitePath(criticalPath(graph, estimate)),
      actual: measuredPath(order, (id) => effectiveUpstream(graph, id), recordOf, finishedAt ?? nowIso),
    },
  };
}
