/**
 * What the store keeps of a run's steps (see ../store.ts): step records and their earlier generations, attempt
 * records (the evidence), compensations, watches and the idempotency records of side effects.
 */
import type { StepError, StepStatus } from '../../plan/schema.ts';
import type { ModelUsage } from '../capabilities.ts';

export type StepKindName = 'tool' | 'agent' | 'human' | 'group';

export interface TraceEntry {
  /** `[plan]`, `[exec]`, `[judge]`, `[fail]`. */
  readonly kind: 'plan' | 'exec' | 'judge' | 'fail';
  readonly at: string;
  readonly text: string;
}

export interface StepRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly status: StepStatus;
  readonly generation: number;
  /** Effective upstream executable step ids (group dependencies expanded). */
  readonly upstream: readonly string[];
  /**
   * Upstream steps that have not let this generation go yet. Derived by every reader from the upstream steps'
   * statuses (shared/engine/run/releases.ts): an item keeps what it was last written with, which a release does not
   * rewrite.
   */
  readonly remaining: number;
  /** Upstream step ids that have let this generation go (derived like `remaining`). */
  readonly released: readonly string[];
  readonly attempts: number;
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly confidence?: number | null;
  readonly trace: readonly TraceEntry[];
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly updatedAt: string;
  /** Execution that claimed this generation (only one claimant ever runs it). */
  readonly claimedBy?: string;
  /** Earlier generations' results, oldest first: superseded by a new generation, kept for audit. */
  readonly history?: readonly StepGenerationRecord[];
  /**
   * The key of the change that started this generation (an invalidation's key). Absent on a first generation and one
   * started without a key.
   */
  readonly generationKey?: string;
  /**
   * The upstream generations whose release this generation counts nothing of, as records of the many-writers design
   * kept them (the run's decider writes none: it counts releases itself). Absent: every release counts.
   */
  readonly staleReleases?: Readonly<Record<string, number>>;
  /** What the step's attempts spent, over all generations (the decider's UsageCounted); absent = nothing yet. */
  readonly usageTokens?: number;
  readonly usageCostUsd?: number;
  /** Its compensation (saga), once one started: what was called with what, and how it ended. */
  readonly compensation?: CompensationRecord;
}

/** The evidence of a step's compensation. */
export interface CompensationRecord {
  readonly target: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly attempts: number;
  readonly idempotencyKey: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  /** How often a person asked for it to be tried again after it failed (names its execution: `~undo~<id>~r<n>`). */
  readonly round?: number;
  /** A person resolved it by hand instead (`compensated` without a call): who, and their note. */
  readonly resolution?: { readonly by: string | null; readonly note: string; readonly at: string };
  /** Who asked for the last retry. */
  readonly retriedBy?: string | null;
}

/** What one earlier generation of a step ended with (its attempts, keyed by generation, stay as they were). */
export interface StepGenerationRecord {
  readonly generation: number;
  readonly status: StepStatus;
  /** Left out when it was too large to keep on the step item (the generation's attempt records still hold it). */
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly confidence?: number | null;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /**
   * The execution that had claimed it, when it was still in flight as it ended (a repeat stops it by this) or was
   * closed while claimed (cancelled, superseded): whoever ends the run closes that generation's attempt by this.
   */
  readonly claimedBy?: string;
}

/** A step that watches an outside resource (`watches` in the plan): written with each plan revision. */
export interface WatchEntry {
  readonly stepId: string;
  readonly resourceKey: string;
}

export interface AttemptRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly target: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly outcome: 'running' | 'succeeded' | 'failed';
  readonly input?: unknown;
  readonly output?: unknown;
  readonly confidence?: number | null;
  readonly error?: StepError | null;
  /** What ran: binding kind, function ARN / URL / model id, idempotency key, replayed or not. */
  readonly evidence: Readonly<Record<string, unknown>>;
  /**
   * Tokens the capability's model consumed in this attempt (model-backed bindings only; a failed attempt has one
   * when the model answered). Sum with shared/engine/usage.ts.
   */
  readonly usage?: ModelUsage;
  /** The plan revision the attempt ran under (audit: which plan asked for it). */
  readonly revision?: number;
  /** What verification made of it: pass, review (held for a person) or fail (a failed call is a fail). */
  readonly verdict?: 'pass' | 'review' | 'fail';
}

export type IdempotencyRecord =
  | { readonly key: string; readonly status: 'in_progress'; readonly expiresAt: number }
  | { readonly key: string; readonly status: 'completed'; readonly result: unknown; readonly expiresAt: number };

/** How many of a run's steps are in each status (statuses with none left out): kept with each decision. */
export type StepCounts = Readonly<Partial<Record<StepStatus, number>>>;
