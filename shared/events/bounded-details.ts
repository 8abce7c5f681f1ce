/**
 * Event details bounded by construction, so that no event grows with the plan or with what a capability answers.
 *
 * Lists of step ids. EventBridge
 * takes at most 256 KB per PutEvents request, and a detail that named every step an invalidation touched passed that
 * alone at about 3,900 steps of 64-character ids (and the publisher could then put none of its request).
 *
 * - `StepsInvalidated` is split into parts, each naming a slice of at most `LISTED_IDS_BYTES` of ids, numbered
 *   `part` of `parts`, with the invalidation's whole count in `total`. Parts rather than a count and a pointer to the
 *   store: every consumer needs the ids themselves (the progress printer opens those steps again, the metrics count
 *   them, the audit log shows them, and a rule target outside cairn has no store to read a pointer from), and each
 *   consumer acts id by id, so a part is as idempotent as the whole was: a part delivered twice, late or out of order
 *   changes nothing more. The parts travel in the one announcement of the write that made the invalidation, so they
 *   are published together or not at all; a consumer that wants the whole set gathers `parts` parts of the same run,
 *   reason and `at`.
 * - `StepBlocked` names a sample of at most `BLOCKED_BY_SAMPLE` upstream causes and `blockedByCount`, all of them: a
 *   person reads a cause, and the whole set is the plan's failed upstream steps, which the run's steps list shows.
 *
 * Step ids are ASCII of at most 64 characters (plan/schema.ts), far below a slice's budget, so every slice keeps to it.
 *
 * Errors. A step's error may carry a capability's message and `details` of any size; an event carries the catalog's
 * `{ code, message, retryable }` only, the message clipped to `EVENT_MESSAGE_CHARS` (the step's record keeps the
 * error whole). Every event the services build goes through `boundedDetail` (services/interpreter.ts `event`).
 * Pure.
 */

/** Bytes of step ids one StepsInvalidated part lists at most (their JSON: quotes and commas counted). */
export const LISTED_IDS_BYTES = 4096;

/** Upstream causes a StepBlocked (and the blocked step's error) names at most. */
export const BLOCKED_BY_SAMPLE = 20;

/** Bytes an id takes in a JSON array of ids: its JSON string and a comma. Ids are ASCII (the plan's id pattern). */
const listedBytes = (id: string): number => JSON.stringify(id).length + 1;

/** The JSON bytes of a list of ids: brackets, ids and the commas between them (the schema's check of a part). */
export const idsBytes = (ids: readonly string[]): number =>
  ids.length === 0 ? 2 : ids.reduce((sum, id) => sum + listedBytes(id), 1);

/**
 * Splits ids, in order, into slices of at most `budget` bytes each (an id larger than the budget alone gets a slice
 * of its own). No ids: one empty slice, so an announcement always says what it is about.
 */
export function sliceIds(ids: readonly string[], budget: number = LISTED_IDS_BYTES): string[][] {
  const slices: string[][] = [];
  let current: string[] = [];
  let bytes = 1;
  for (const id of ids) {
    const size = listedBytes(id);
    if (current.length > 0 && bytes + size > budget) {
      slices.push(current);
      current = [];
      bytes = 1;
    }
    current.push(id);
    bytes += size;
  }
  if (current.length > 0 || slices.length === 0) slices.push(current);
  return slices;
}

/** One StepsInvalidated detail: a slice of the invalidated steps. */
export interface StepsInvalidatedPart {
  readonly runId: string;
  readonly stepIds: string[];
  readonly part: number;
  readonly parts: number;
  readonly total: number;
  readonly reason: string;
}

/** The StepsInvalidated details of one invalidation: its steps in slices, parts numbered from 1. */
export function stepsInvalidatedParts(
  runId: string,
  stepIds: readonly string[],
  reason: string,
  budget: number = LISTED_IDS_BYTES,
): StepsInvalidatedPart[] {
  const slices = sliceIds(stepIds, budget);
  return slices.map((slice, index) => ({
    runId,
    stepIds: slice,
    part: index + 1,
    parts: slices.length,
    total: stepIds.length,
    reason,
  }));
}

/** What a blocked step says about its causes: a sample of them, their count, and a message naming the sample. */
export interface BlockedBy {
  readonly blockedBy: string[];
  readonly blockedByCount: number;
  readonly message: string;
}

/** The causes of a block, bounded: the first `BLOCKED_BY_SAMPLE` named, all of them counted. */
export function blockedByOf(causes: readonly string[], sample: number = BLOCKED_BY_SAMPLE): BlockedBy {
  const named = causes.slice(0, sample);
  const more = causes.length - named.length;
  const list = more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
  return {
    blockedBy: named,
    blockedByCount: causes.length,
    message: `blocked: upstream step ${list} did not succeed`,
  };
}

/** Characters of an error message an event carries at most. */
export const EVENT_MESSAGE_CHARS = 1000;

interface ErrorLike {
  readonly code: string;
  readonly message: string;
  readonly retryable?: boolean | undefined;
}

const isErrorLike = (value: unknown): value is ErrorLike =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ErrorLike).code === 'string' &&
  typeof (value as ErrorLike).message === 'string';

/** An error as events carry it: the catalog's fields, the message clipped (never splitting a surrogate pair). */
export function eventError(error: ErrorLike): ErrorLike {
  let message = error.message;
  if (message.length > EVENT_MESSAGE_CHARS) {
    let cut = EVENT_MESSAGE_CHARS - 1;
    const last = message.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
    message = `${message.slice(0, cut)}…`;
  }
  return { code: error.code, message, ...(error.retryable === undefined ? {} : { retryable: error.retryable }) };
}

/** A detail with its `error`, if it has one, as events carry it; everything else as it is. */
export function boundedDetail<D extends object>(detail: D): D {
  const error = (detail as { error?: unknown }).error;
  return isErrorLike(error) ? { ...detail, error: eventError(error) } : detail;
}
