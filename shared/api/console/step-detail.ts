/**
 * Everything the console shows about one step: its definition (input, contracts, approval, estimate), its record
 * (status, output, error, confidence, trace), every attempt of every generation with its evidence, the approvals
 * asked about it, and its generation history (attempt counts and outcomes per generation, plus the step's events).
 */
import { buildGraph, groupStatus } from '../../plan/graph.ts';
import { type PlanStep, type StepKind, type StepStatus, stepKind } from '../../plan/schema.ts';
import type { AttemptRecord, RunEventRecord, RunRecord, StepRecord, TraceEntry } from '../../ports/store.ts';
import type { ApprovalView } from '../approvals.ts';

export interface GenerationView {
  readonly generation: number;
  readonly attempts: number;
  /** The outcome of the generation's last attempt (null: no attempt yet). */
  readonly outcome: AttemptRecord['outcome'] | null;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  /** Whether this is the step's current generation (older ones were superseded by an invalidation). */
  readonly current: boolean;
}

export interface StepDetail {
  readonly runId: string;
  /** The plan revision the definition comes from. */
  readonly revision: number;
  readonly kind: StepKind;
  readonly status: StepStatus;
  readonly step: PlanStep;
  readonly children: readonly string[];
  readonly record: {
    readonly generation: number;
    readonly attempts: number;
    readonly output: unknown;
    readonly error: StepRecord['error'] | null;
    readonly confidence: number | null;
    readonly startedAt: string | null;
    readonly finishedAt: string | null;
    readonly upstream: readonly string[];
    readonly trace: readonly TraceEntry[];
    /** A finished mutating step's compensation (saga), when one ran or a person acted on it. */
    readonly compensation?: StepRecord['compensation'];
  } | null;
  readonly attempts: readonly AttemptRecord[];
  readonly generations: readonly GenerationView[];
  readonly approvals: readonly ApprovalView[];
  readonly events: readonly RunEventRecord[];
}

export interface StepDetailInput {
  readonly run: RunRecord;
  readonly revision: number;
  readonly steps: readonly PlanStep[];
  readonly step: PlanStep;
  readonly records: readonly StepRecord[];
  readonly attempts: readonly AttemptRecord[];
  readonly approvals: readonly ApprovalView[];
  readonly events: readonly RunEventRecord[];
}

export function generationsOf(attempts: readonly AttemptRecord[], current: number | undefined): GenerationView[] {
  const byGeneration = new Map<number, AttemptRecord[]>();
  for (const attempt of attempts) {
    const list = byGeneration.get(attempt.generation) ?? [];
    list.push(attempt);
    byGeneration.set(attempt.generation, list);
  }
  if (current !== undefined && !byGeneration.has(current)) byGeneration.set(current, []);
  return [...byGeneration.entries()]
    .sort(([a], [b]) => a - b)
    .map(([generation, list]) => {
      const sorted = [...list].sort((a, b) => a.attempt - b.attempt);
      const last = sorted.at(-1);
      return {
        generation,
        attempts: sorted.length,
        outcome: last?.outcome ?? null,
        startedAt: sorted[0]?.startedAt ?? null,
        finishedAt: last?.finishedAt ?? null,
        current: generation === current,
      };
    });
}

export function buildStepDetail(input: StepDetailInput): StepDetail {
  const { step } = input;
  const kind = stepKind(step);
  const record = input.records.find((r) => r.stepId === step.id);
  let status: StepStatus = record?.status ?? 'pending';
  let children: readonly string[] = [];
  if (kind === 'group') {
    const graph = buildGraph(input.steps);
    status = groupStatus(graph, step.id, new Map(input.records.map((r) => [r.stepId, r.status])));
    children = graph.children(step.id);
  }
  const attempts = input.attempts
    .filter((a) => a.stepId === step.id)
    .sort((a, b) => a.generation - b.generation || a.attempt - b.attempt);
  return {
    runId: input.run.runId,
    revision: input.revision,
    kind,
    status,
    step,
    children,
    record: record
      ? {
          generation: record.generation,
          attempts: record.attempts,
          output: record.output ?? null,
          error: record.error ?? null,
          confidence: record.confidence ?? null,
          startedAt: record.startedAt ?? null,
          finishedAt: record.finishedAt ?? null,
          upstream: record.upstream,
          trace: record.trace,
          ...(record.compensation === undefined ? {} : { compensation: record.compensation }),
        }
      : null,
    attempts,
    generations: kind === 'group' ? [] : generationsOf(attempts, record?.generation),
    approvals: input.approvals.filter((a) => a.stepId === step.id),
    events: input.events.filter((e) => e.stepId === step.id),
  };
}
