/**
 * Watching a run through the API: read the whole run, then wait on its live event feed (a long poll of
 * GET /runs/{id}/events?follow=1) and read the run again only once something happened (at most every `intervalMs`),
 * print one line per observed step transition with a done/total counter, stop when the run is terminal or settled in
 * `paused` (waiting for a person). A quiet run costs a long poll every FOLLOW_WAIT_SECONDS, not a read of every step
 * twice a second. A transition that starts and ends between two reads of the run is not printed; every final state
 * is.
 */
import type { RunStatus, StepStatus } from '../plan/schema.ts';

/** What watching reads of a step: the server's view and the client's generated type both are one. */
export interface StepView {
  readonly id: string;
  readonly target: string | null;
  readonly status: StepStatus;
  readonly generation: number | null;
  readonly attempts: number;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly confidence: number | null;
}

/** What watching reads of a run. */
export interface RunView {
  readonly runId: string;
  readonly status: RunStatus;
  readonly objective: string;
  readonly revision: number;
  readonly steps: readonly StepView[];
  readonly terminal?: { readonly reason: string };
}

/** The least time between two reads of the whole run while events keep coming. */
export const DEFAULT_POLL_MS = 500;
/** A paused run must look the same on this many reads in a row: a step finishing may pause it for an instant. */
const PAUSED_CONFIRMATIONS = 2;
/** How long one wait on the feed lasts with nothing happening (a run that looks paused: a moment, to confirm it). */
export const FOLLOW_WAIT_SECONDS = 20;
const PAUSED_WAIT_SECONDS = 1;

const TERMINAL: ReadonlySet<RunStatus> = new Set(['complete', 'failed', 'cancelled']);
const FINISHED: ReadonlySet<StepStatus> = new Set(['succeeded', 'failed', 'skipped', 'blocked', 'cancelled']);

const MARKS: Partial<Record<StepStatus, string>> = {
  ready: '•',
  running: '…',
  retrying: '↻',
  awaiting_approval: '?',
  succeeded: '✓',
  failed: '✗',
  skipped: '·',
  blocked: '⊘',
  superseded: '✎',
  cancelled: '■',
};

export const isTerminalStatus = (status: RunStatus): boolean => TERMINAL.has(status);

/** Executable steps of the current plan: groups have no executions, superseded steps belong to an older plan. */
const counted = (run: RunView): StepView[] => run.steps.filter((s) => s.target !== null && s.status !== 'superseded');

export function counter(run: RunView): { done: number; total: number } {
  const steps = counted(run);
  return { done: steps.filter((s) => FINISHED.has(s.status)).length, total: steps.length };
}

function describe(step: StepView): string {
  const error = step.error ? `: ${step.error.code} ${step.error.message}` : '';
  switch (step.status) {
    case 'running':
      return `${step.id} running (${step.target}${step.attempts > 1 ? `, attempt ${step.attempts}` : ''})`;
    case 'retrying':
      return `${step.id} retrying after attempt ${step.attempts}${error}`;
    case 'awaiting_approval':
      return `${step.id} waits for a person (cairn approvals)`;
    case 'succeeded':
      return `${step.id} succeeded${step.confidence === null ? '' : ` (confidence ${step.confidence})`}`;
    case 'failed':
      return `${step.id} failed after ${step.attempts} attempt${step.attempts === 1 ? '' : 's'}${error}`;
    default:
      return `${step.id} ${step.status}${step.generation !== null && step.generation > 1 ? ` (generation ${step.generation})` : ''}`;
  }
}

const fingerprint = (step: StepView): string => `${step.status}#${step.generation}#${step.attempts}`;

/** The executable steps that changed between two snapshots (the first snapshot: every step that has moved). */
function moved(previous: RunView | undefined, next: RunView): StepView[] {
  const before = new Map((previous?.steps ?? []).map((s) => [s.id, fingerprint(s)]));
  return next.steps.filter((step) => {
    if (step.target === null) return false;
    const was = before.get(step.id);
    return was !== fingerprint(step) && !(was === undefined && step.status === 'pending');
  });
}

const stepLine = (step: StepView, { done, total }: { done: number; total: number }): string =>
  `[${done}/${total}] ${MARKS[step.status] ?? ' '} ${describe(step)}`;

/** The lines for what changed between two snapshots (the first snapshot reports every step that has moved). */
export function transitions(previous: RunView | undefined, next: RunView): string[] {
  const count = counter(next);
  return moved(previous, next).map((step) => stepLine(step, count));
}

/**
 * What a watch saw, one event per line it writes (`--json --watch` prints these as JSON lines): the run's first
 * sight, a change of its status, a step's transition, and where the watch ended.
 */
export type WatchEvent =
  | { readonly event: 'run'; readonly runId: string; readonly objective: string; readonly line: string }
  | {
      readonly event: 'status';
      readonly runId: string;
      readonly status: RunStatus;
      readonly revision: number;
      readonly line: string;
    }
  | {
      readonly event: 'step';
      readonly runId: string;
      readonly stepId: string;
      readonly status: StepStatus;
      readonly attempts: number;
      readonly generation: number | null;
      readonly error: StepView['error'];
      readonly done: number;
      readonly total: number;
      readonly line: string;
    }
  | {
      readonly event: 'end';
      readonly runId: string;
      readonly status: RunStatus;
      readonly done: number;
      readonly total: number;
      readonly reason: string | null;
      readonly line: string;
    };

export function finalLine(run: RunView): string {
  const { done, total } = counter(run);
  const reason = run.terminal?.reason ? `: ${run.terminal.reason}` : '';
  if (run.status === 'paused') {
    const waiting = run.steps.filter((s) => s.status === 'awaiting_approval').map((s) => s.id);
    return `run ${run.runId} paused${reason || (waiting.length ? `: waiting for a person at ${waiting.join(', ')}` : '')} (cairn approvals, cairn approve <id>)`;
  }
  const failed = run.steps.filter((s) => s.target !== null && s.status === 'failed').map((s) => s.id);
  const root = run.status === 'failed' && failed.length ? ` [failed: ${failed.join(', ')}]` : '';
  return `run ${run.runId} ${run.status} (${done}/${total} steps done)${reason}${root}`;
}

export interface WatchOptions {
  readonly write: (line: string) => void;
  /** Each line's event, with its fields (called before `write` of the same line). */
  readonly emit?: (event: WatchEvent) => void;
  readonly intervalMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What watching reads: the whole run, and the feed (the seq of the last event read, after waiting for new ones). */
export interface WatchReader<R extends RunView> {
  getRun(runId: string): Promise<R>;
  /**
   * Waits up to `waitSeconds` for events after `after` and reads them all; returns the last seq read (`after` when
   * none came). With `waitSeconds` 0 it reads what the log holds now.
   */
  nextEvents(runId: string, after: string | undefined, waitSeconds: number): Promise<string | undefined>;
}

/** Follows the run until it is terminal or stays paused; returns the last snapshot. */
export async function watchRun<R extends RunView>(
  client: WatchReader<R>,
  runId: string,
  options: WatchOptions,
): Promise<R> {
  const sleep = options.sleep ?? defaultSleep;
  const interval = options.intervalMs ?? DEFAULT_POLL_MS;
  let previous: R | undefined;
  let pausedSeen = 0;
  const tell = (event: WatchEvent) => {
    options.emit?.(event);
    options.write(event.line);
  };
  // The feed's place before the first read of the run: whatever happens after that read is waited for.
  let after = await client.nextEvents(runId, undefined, 0);
  for (;;) {
    const readAt = Date.now();
    const run = await client.getRun(runId);
    if (previous === undefined)
      tell({ event: 'run', runId: run.runId, objective: run.objective, line: `run ${run.runId}: ${run.objective}` });
    if (run.status !== previous?.status && run.status !== 'paused' && !isTerminalStatus(run.status)) {
      const line = `run ${run.runId} ${run.status}${run.revision > 0 ? ` (plan revision ${run.revision})` : ''}`;
      tell({ event: 'status', runId: run.runId, status: run.status, revision: run.revision, line });
    }
    const count = counter(run);
    const steps = moved(previous, run);
    for (const step of steps) {
      const { id: stepId, status, attempts, generation, error } = step;
      const line = stepLine(step, count);
      tell({ event: 'step', runId: run.runId, stepId, status, attempts, generation, error, ...count, line });
    }
    const settled = previous?.status === 'paused' && steps.length === 0;
    pausedSeen = run.status !== 'paused' ? 0 : settled ? pausedSeen + 1 : 1;
    previous = run;
    if (isTerminalStatus(run.status) || pausedSeen >= PAUSED_CONFIRMATIONS) {
      const reason = run.terminal?.reason ?? null;
      tell({ event: 'end', runId: run.runId, status: run.status, ...count, reason, line: finalLine(run) });
      return run;
    }
    after = await client.nextEvents(runId, after, run.status === 'paused' ? PAUSED_WAIT_SECONDS : FOLLOW_WAIT_SECONDS);
    // A busy run's events come back at once: its whole read is not repeated more often than the interval.
    const since = Date.now() - readAt;
    if (since < interval) await sleep(interval - since);
  }
}
