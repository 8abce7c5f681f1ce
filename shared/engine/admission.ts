/**
 * Admission, the pure part: how many of one tenant's runs may run at once (`maxRunningRuns`), and which queued run
 * starts next. A run holds a slot from its admission until it ends (complete, failed or cancelled); a paused run still
 * holds its slot, since a person may move it on at any time. Runs over the bound wait `queued` and are admitted
 * oldest first.
 *
 * The state is the tenant's admission record: its version and the runs holding a slot. The queue is read beside it
 * (the tenant's queue entries, oldest first). One writer decides at a time: the shell (shared/services/admission.ts)
 * writes the decision over the version it read, and decides again on a fresh read when another writer got there.
 */

/** A tenant's admission record as read: absent is version 0 with nothing running. */
export interface AdmissionState {
  readonly version: number;
  /** The runs holding a slot, in the order they took it. */
  readonly running: readonly string[];
}

/** A run waiting for a slot, as its queue entry says. */
export interface QueuedRun {
  readonly runId: string;
  readonly createdAt: string;
}

export type AdmissionChange =
  /** A run was queued (or a pass is asked for): admit what the bound allows. */
  | { readonly kind: 'pass' }
  /** A run ended: its slot is free (a repeat, or a run that held none, frees nothing). */
  | { readonly kind: 'release'; readonly runId: string }
  /**
   * A finished run reopened: it runs again and takes a slot at once, even over the bound (its steps are already
   * moving; holding them back would be the decider's business, not admission's).
   */
  | { readonly kind: 'reenter'; readonly runId: string };

export interface AdmissionDecision {
  /** The runs holding a slot after the change. */
  readonly running: readonly string[];
  /** Whether the record is to be written (at the read version plus one). */
  readonly write: boolean;
  /**
   * Queued runs that hold a slot, oldest first: each is told to start and its queue entry dropped. Besides the runs
   * admitted now, this repeats any admitted by a pass that died before it told them (telling twice is harmless).
   */
  readonly dispatch: readonly QueuedRun[];
  /** The runs this decision admitted (a subset of `dispatch`). */
  readonly admitted: readonly string[];
}

/** `Infinity`: no bound. */
export type RunningBound = number;

/** How many queue entries a pass must read to decide: those holding a slot already, and one per free slot. */
export function queueReadLimit(max: RunningBound, state: AdmissionState, cap = 1000): number {
  const free = Math.max(0, max - state.running.length);
  return Math.max(1, Math.min(cap, state.running.length + (Number.isFinite(free) ? free : cap)));
}

/**
 * Decides a change: the slots after it, and which queued runs start. `queue` is the tenant's queue (oldest first,
 * at least `queueReadLimit` entries of it when there are that many).
 *
 * A release is always written, even when it frees nothing: its run's queue entry was dropped before this read, and
 * the version it moves makes any pass that read that entry (and would admit a run that already ended) decide again.
 */
export function decideAdmission(input: {
  readonly max: RunningBound;
  readonly state: AdmissionState;
  readonly queue: readonly QueuedRun[];
  readonly change: AdmissionChange;
}): AdmissionDecision {
  const { max, state, queue, change } = input;
  const running = state.running.filter((id) => change.kind !== 'release' || id !== change.runId);
  let changed = running.length !== state.running.length;
  if (change.kind === 'reenter' && !running.includes(change.runId)) {
    running.push(change.runId);
    changed = true;
  }
  const holding = new Set(running);
  const dispatch: QueuedRun[] = [];
  const admitted: string[] = [];
  for (const entry of [...queue].sort(byAge)) {
    if (holding.has(entry.runId)) {
      dispatch.push(entry);
      continue;
    }
    if (running.length >= max) continue;
    running.push(entry.runId);
    holding.add(entry.runId);
    dispatch.push(entry);
    admitted.push(entry.runId);
    changed = true;
  }
  return { running, write: changed || change.kind === 'release', dispatch, admitted };
}

/** Oldest first; runs created in the same millisecond in id order, so every writer sees one order. */
export function byAge(a: QueuedRun, b: QueuedRun): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}
