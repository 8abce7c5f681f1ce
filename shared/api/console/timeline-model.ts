/**
 * The data behind the console's Gantt view: one row per executable step of the current plan (dependencies first)
 * with its planned slot (earliest start by `estimatedDurationSeconds` along its effective dependencies), its attempts
 * (retries are separate bars) and its approval waits, plus two critical paths: the planned one (estimates only) and
 * the actual one (measured durations where a step has run, estimates elsewhere).
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

const seconds = (from: string, to: string): number => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

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
  const measured = (id: string): number => {
    const record = recordOf.get(id);
    if (!record?.startedAt) return estimate(id);
    return seconds(record.startedAt, record.finishedAt ?? finishedAt ?? nowIso);
  };

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
      actual: finitePath(criticalPath(graph, measured)),
    },
  };
}
