/**
 * The reasoning trace of a step: short `[plan]`, `[exec]`, `[judge]` and `[fail]` entries. Retention keeps items
 * small: a failed step keeps its whole trace (that is where the diagnosis is), a succeeded one only its last entry
 * unless the deployment asks for full traces. Every trace is also capped, oldest entries dropped first.
 */
import type { StepStatus } from '../plan/schema.ts';
import type { TraceEntry } from '../ports/store.ts';

export type TraceRetention = 'full' | 'last';

export const MAX_TRACE_TEXT = 2000;
export const MAX_TRACE_ENTRIES = 50;

const TAGS: Readonly<Record<TraceEntry['kind'], string>> = {
  plan: '[plan]',
  exec: '[exec]',
  judge: '[judge]',
  fail: '[fail]',
};

/** One trace entry; the text is trimmed to MAX_TRACE_TEXT characters. */
export function traceEntry(kind: TraceEntry['kind'], text: string, at: string | Date): TraceEntry {
  const clipped = text.length > MAX_TRACE_TEXT ? `${text.slice(0, MAX_TRACE_TEXT - 1)}…` : text;
  return { kind, at: typeof at === 'string' ? at : at.toISOString(), text: clipped };
}

/** `[exec] 2024-…: text`, the way the CLI and logs print an entry. */
export const formatTraceEntry = (entry: TraceEntry): string => `${TAGS[entry.kind]} ${entry.at} ${entry.text}`;

/**
 * The trace a step keeps once it is in `status`. Failed steps (and every open or otherwise finished step) keep the
 * full trace; a succeeded step keeps only its last entry under 'last' retention. At most `maxEntries` entries.
 */
export function retainTrace(
  trace: readonly TraceEntry[],
  status: StepStatus,
  retention: TraceRetention,
  maxEntries: number = MAX_TRACE_ENTRIES,
): TraceEntry[] {
  if (status === 'succeeded' && retention === 'last') return trace.slice(-1);
  const cap = Math.max(1, Math.floor(maxEntries));
  return trace.length > cap ? trace.slice(-cap) : [...trace];
}

/** Appends entries and applies retention in one go (what a transition to `status` writes back). */
export function appendAndRetain(
  trace: readonly TraceEntry[],
  entries: readonly TraceEntry[],
  status: StepStatus,
  retention: TraceRetention,
): TraceEntry[] {
  return retainTrace([...trace, ...entries], status, retention);
}
