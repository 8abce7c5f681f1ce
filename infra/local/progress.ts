/**
 * Live progress for the terminal: one line per step transition with a done/total counter, fed by the bus.
 * Pure formatting over bus envelopes, so the same lines can be tested without a stack.
 */
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { terminalLine } from '../../shared/terminal-text.ts';

// Done means the step's work is finished (succeeded or skipped). Failed and blocked steps are not counted: a replan
// or an invalidation may still run them again, and a counter that goes backwards reads as a bug.
const DONE_EVENTS = new Set(['StepSucceeded', 'StepSkipped']);
const UNDONE_EVENTS = new Set(['StepStarted', 'StepFailed', 'StepBlocked', 'StepRetrying']);

const MARKS: Record<string, string> = {
  RunStarted: '▶',
  StepStarted: '…',
  StepRetrying: '↻',
  StepSucceeded: '✓',
  StepFailed: '✗',
  StepSkipped: '·',
  StepBlocked: '⊘',
  ApprovalRequested: '?',
  ApprovalDecided: '!',
  PlanRevised: '✎',
  StepsInvalidated: '⟲',
  RunFinished: '■',
};

interface RunProgress {
  total: number;
  /** Finished steps, by id: a step that starts a new generation (a replan, an invalidation) is open again. */
  done: Set<string>;
}

export type ProgressPrinter = (event: BusEnvelope) => void;

/** Returns a bus subscriber that writes progress lines with `write`. */
export function createProgressPrinter(write: (line: string) => void): ProgressPrinter {
  const runs = new Map<string, RunProgress>();
  return (event) => {
    const d = event.detail as Record<string, unknown>;
    const runId = String(d.runId ?? '');
    const type = event['detail-type'];
    let run = runs.get(runId);
    if (!run) {
      run = { total: 0, done: new Set<string>() };
      runs.set(runId, run);
    }
    if (type === 'RunStarted') run.total = Number(d.steps ?? 0);
    const stepId = String(d.stepId);
    if (DONE_EVENTS.has(type)) run.done.add(stepId);
    else if (UNDONE_EVENTS.has(type)) run.done.delete(stepId);
    else if (type === 'StepsInvalidated' && Array.isArray(d.stepIds))
      for (const id of d.stepIds) run.done.delete(String(id));
    const counter = run.total > 0 ? `[${run.done.size}/${run.total}]` : '';
    // An objective, a reason or a tool's error is anybody's text: the terminal gets it as text, on this one line.
    write(terminalLine(`${counter.padEnd(8)} ${MARKS[type] ?? ' '} ${describe(type, d)}`));
  };
}

function describe(type: string, d: Record<string, unknown>): string {
  const step = typeof d.stepId === 'string' ? d.stepId : '';
  const err = (d.error ?? {}) as { code?: string; message?: string };
  switch (type) {
    case 'RunStarted':
      return `run ${String(d.runId)} started: ${String(d.objective ?? '')} (${String(d.steps)} steps, revision ${String(d.revision)})`;
    case 'StepStarted':
      return `${step} started (${String(d.target ?? 'group')})`;
    case 'StepRetrying':
      return `${step} retrying: attempt ${String(d.attempt)} in ${String(d.delaySeconds)} s (${err.code ?? ''} ${err.message ?? ''})`;
    case 'StepSucceeded':
      return `${step} succeeded${typeof d.confidence === 'number' ? ` (confidence ${d.confidence})` : ''}`;
    case 'StepFailed':
      return `${step} failed${d.final === true ? '' : ' (will retry)'}: ${err.code ?? ''} ${err.message ?? ''}`;
    case 'StepSkipped':
      return `${step} skipped: ${String(d.reason ?? '')}`;
    case 'StepBlocked':
      return `${step} blocked by ${Array.isArray(d.blockedBy) ? d.blockedBy.join(', ') : '?'}${moreOf(d)}`;
    case 'ApprovalRequested':
      return `${step} waits for a person: approval ${String(d.approvalId)} (cairn approve ${String(d.approvalId)})`;
    case 'ApprovalDecided':
      return `${step} ${String(d.decision)} by ${String(d.by ?? 'someone')}`;
    case 'PlanRevised':
      return `plan revised to revision ${String(d.revision)}: ${String(d.reason ?? '')}`;
    case 'StepsInvalidated':
      return `stale: ${Array.isArray(d.stepIds) ? d.stepIds.join(', ') : ''} (${String(d.reason ?? '')})${partOf(d)}`;
    case 'RunFinished':
      return `run ${String(d.runId)} ${String(d.state)}: ${String(d.reason ?? '')}`;
    default:
      return `${type} ${step}`;
  }
}

/** An invalidation announced in several events (events/bounded-details.ts) says which part a line shows. */
const partOf = (d: Record<string, unknown>): string =>
  typeof d.parts === 'number' && d.parts > 1 ? ` [part ${String(d.part)} of ${d.parts}, ${String(d.total)} steps]` : '';

/** A block names a sample of its causes: how many more there are. */
const moreOf = (d: Record<string, unknown>): string => {
  const named = Array.isArray(d.blockedBy) ? d.blockedBy.length : 0;
  return typeof d.blockedByCount === 'number' && d.blockedByCount > named
    ? ` and ${d.blockedByCount - named} more`
    : '';
};
