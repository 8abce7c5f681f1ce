/**
 * What the chaos suite knows of one run once it is over, read from outside (the HTTP API and the conformance
 * ledger), and what an invariant reports. The checkers are pure functions of this record, so each can be shown to
 * fail on a hand-made one.
 */

/** Statuses a run ends in for good; `paused` counts only with the engine's own terminal record (a reason). */
export const FINAL_RUN_STATUSES: ReadonlySet<string> = new Set(['complete', 'failed', 'cancelled']);

/** Step statuses that still hold work: a finished run must have none. */
export const OPEN_STEP_STATUSES: ReadonlySet<string> = new Set([
  'pending',
  'ready',
  'running',
  'retrying',
  'awaiting_approval',
]);

/** Step statuses that let dependents go on. */
export const RELEASING_STEP_STATUSES: ReadonlySet<string> = new Set(['succeeded', 'skipped']);

export interface AttemptObservation {
  readonly generation: number;
  readonly attempt: number;
  readonly outcome: string;
  /** For the reader of a dump: when it ran and how it failed. */
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly error?: string;
}

export interface StepObservation {
  readonly id: string;
  readonly target: string | null;
  readonly dependsOn: readonly string[];
  readonly status: string;
  readonly generation: number | null;
  /** Every attempt of every generation (GET /runs/{id}/steps/{stepId}). */
  readonly attempts: readonly AttemptObservation[];
  /** Whether the capability is mutating (its side effects land in the conformance ledger). */
  readonly mutating: boolean;
  /** The step's error code, if it failed. */
  readonly error?: string;
  /** The most attempts one generation may take (maxRetries + 1); absent: not checked (people and reviews). */
  readonly maxAttempts?: number;
}

export interface EventObservation {
  readonly seq: string;
  readonly type: string;
  readonly at: string;
  readonly stepId?: string;
  readonly generation?: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface LedgerObservation {
  readonly entryId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly at: string;
}

export interface RunObservation {
  readonly runId: string;
  /** The run's seed and place in the suite, to re-run it. */
  readonly label: string;
  /** The run's status as GET /runs/{id} shows it at the end. */
  readonly status: string;
  readonly terminal?: { readonly state: string; readonly reason: string };
  /** How long the run took to reach its end (terminal, or paused with a reason); null: not within the bound. */
  readonly endedAfterMs: number | null;
  readonly boundMs: number;
  /** The stack had gone quiet (nothing moving, the bus drained) when the run was read: an open run is stuck. */
  readonly quiet?: boolean;
  /** The steps of the current plan revision, in plan order. */
  readonly steps: readonly StepObservation[];
  /** The run's audit log in its own order. */
  readonly events: readonly EventObservation[];
  /** The conformance ledger's entries of this run. */
  readonly ledger: readonly LedgerObservation[];
}

export interface Violation {
  readonly runId: string;
  readonly label: string;
  readonly invariant: InvariantName;
  readonly detail: string;
}

export type InvariantName = 'terminal' | 'ledger-once' | 'step-once' | 'downstream-of-failure' | 'after-finish';

export type InvariantCheck = (run: RunObservation) => Violation[];

/** A violation of `invariant` on `run`. */
export const violation = (run: RunObservation, invariant: InvariantName, detail: string): Violation => ({
  runId: run.runId,
  label: run.label,
  invariant,
  detail,
});

/** `stepId#generation`, the unit of exactly-once. */
export const generationKey = (stepId: string, generation: number): string => `${stepId}#${generation}`;
