/**
 * The executed history a replan prompt carries. It must stay small whatever ran: a group whose executable
 * descendants have all finished collapses to one line (the topmost such group), an output is shown only as a
 * clipped JSON excerpt, and steps that have not started are left out (the plan itself lists them). At most one
 * entry per plan step, each bounded, so the history grows with the plan's step limit and never with the outputs.
 */
import { buildGraph, type PlanGraph } from '../../plan/graph.ts';
import type { Plan, StepError, StepStatus } from '../../plan/schema.ts';
import type { PlanHistoryEntry } from '../../ports/plan-model.ts';
import { clipText, isFinishedStatus, stepsById } from './step-definition.ts';

export const HISTORY_OUTPUT_CHARS = 200;
export const HISTORY_MESSAGE_CHARS = 300;

/** A step record as the history reads it (a StepRecord fits). */
export interface HistoryStepView {
  readonly stepId: string;
  readonly status: StepStatus;
  readonly output?: unknown;
  readonly error?: StepError | null | undefined;
  readonly attempts?: number;
}

export interface HistoryOptions {
  /** Characters of an output's JSON shown (default HISTORY_OUTPUT_CHARS). */
  readonly maxOutputChars?: number;
  /** Characters of an error message shown (default HISTORY_MESSAGE_CHARS). */
  readonly maxMessageChars?: number;
}

const NOT_STARTED: ReadonlySet<StepStatus | undefined> = new Set([undefined, 'pending', 'ready']);

function outputText(output: unknown, max: number): string {
  if (output === undefined) return 'no output';
  let json: string;
  try {
    json = JSON.stringify(output) ?? String(output);
  } catch {
    json = String(output);
  }
  return `output ${clipText(json, max)}`;
}

function stepSummary(record: HistoryStepView, output: number, message: number): string | undefined {
  switch (record.status) {
    case 'succeeded':
      return outputText(record.output, output);
    case 'skipped':
      return 'its condition was false';
    case 'failed': {
      const attempts = record.attempts ? ` after ${record.attempts} attempt${record.attempts === 1 ? '' : 's'}` : '';
      const error = record.error;
      return error ? `${error.code}: ${clipText(error.message, message)}${attempts}` : `failed${attempts}`;
    }
    case 'blocked':
      return 'an upstream step failed';
    case 'awaiting_approval':
      return 'waiting for a person';
    default:
      return undefined;
  }
}

function groupSummary(graph: PlanGraph, id: string, records: ReadonlyMap<string, HistoryStepView>): string {
  const descendants = graph.executableDescendants(id);
  const succeeded = descendants.filter((d) => records.get(d)?.status === 'succeeded').length;
  const skipped = descendants.length - succeeded;
  const s = descendants.length === 1 ? '' : 's';
  return `all ${descendants.length} step${s} finished: ${succeeded} succeeded, ${skipped} skipped`;
}

export function summarizeHistory(
  plan: Plan,
  steps: Iterable<HistoryStepView>,
  options: HistoryOptions = {},
): PlanHistoryEntry[] {
  const maxOutput = Math.max(0, options.maxOutputChars ?? HISTORY_OUTPUT_CHARS);
  const maxMessage = Math.max(0, options.maxMessageChars ?? HISTORY_MESSAGE_CHARS);
  const graph = buildGraph(plan.steps);
  const byId = stepsById(plan);
  const records = new Map<string, HistoryStepView>();
  for (const record of steps) records.set(record.stepId, record);
  const finished = (id: string): boolean => isFinishedStatus(records.get(id)?.status);

  const entries: PlanHistoryEntry[] = [];
  const visit = (id: string): void => {
    const step = byId.get(id);
    const title = step?.title ?? id;
    if (graph.isGroup(id)) {
      const descendants = graph.executableDescendants(id);
      if (descendants.length > 0 && descendants.every(finished)) {
        const status = descendants.some((d) => records.get(d)?.status === 'succeeded') ? 'succeeded' : 'skipped';
        entries.push({ stepId: id, title, target: null, status, summary: groupSummary(graph, id, records) });
        return;
      }
      for (const child of graph.children(id)) visit(child);
      return;
    }
    const record = records.get(id);
    if (record === undefined || NOT_STARTED.has(record.status)) return;
    const summary = stepSummary(record, maxOutput, maxMessage);
    entries.push({
      stepId: id,
      title,
      target: step?.target ?? null,
      status: record.status,
      ...(summary === undefined ? {} : { summary }),
    });
  };
  for (const id of graph.ids) if (graph.parentOf(id) === undefined) visit(id);
  return entries;
}
