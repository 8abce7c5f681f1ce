/**
 * The request bodies and queries the routes read, as the routes check them (readJson, readQuery) and as the
 * OpenAPI document shows them: one schema for both, so the document cannot promise what the route refuses.
 * Bodies shared with the planning code stay in body.ts.
 */
import { z } from 'zod';
import { MAX_OBJECTIVE_LENGTH, RUN_STATUSES } from '../../../plan/schema.ts';
import { planRequestBody, submitBody } from '../../body.ts';
import { cursorField, limitField } from '../../cursor.ts';
import { MAX_WAIT_SECONDS } from '../../event-feed.ts';
import { described } from '../registry.ts';
import { APPROVAL_STATUSES } from './approvals.ts';

const nonBlank = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank' });

/** `POST /runs`: an objective to plan, or a plan to run (told apart by the presence of `plan`). */
export const createRunBody = z.union([planRequestBody, submitBody]);

/** `POST /runs/{id}/cancel` takes an optional body: `compensate: true` undoes the run's segments before it ends. */
export const cancelBody = z.strictObject({ compensate: z.boolean().optional() });

export const MAX_RUN_PAGE = 100;
export const listRunsQuery = z.strictObject({
  status: z.enum(RUN_STATUSES).optional(),
  q: described(
    'Only runs whose objective or run id contains this text (any case). A search reads up to 1000 runs a page.',
    z.string().min(1).max(200).optional(),
  ),
  limit: limitField(MAX_RUN_PAGE),
  cursor: cursorField,
});

export const MAX_EVENT_PAGE = 1000;
/**
 * An event's seq is `v<version>~<index>` (16 characters), or on older logs `<ISO time>~<announcement id>~<index>`:
 * 66 characters with a UUID id, up to 110 as the store reads them (dynamo-events.ts).
 */
const MAX_SEQ_LENGTH = 128;
/** `after` (an event's seq, or `cursor`, the same) lets a poller read only what is new. */
export const eventsQuery = z.strictObject({
  after: described(
    "Only the events after this one (an event's seq).",
    z.string().min(1).max(MAX_SEQ_LENGTH).optional(),
  ),
  cursor: z.string().min(1).max(MAX_SEQ_LENGTH).optional(),
  limit: limitField(MAX_EVENT_PAGE),
  follow: described(
    'Follow the run: embedded, a stream of server-sent events until RunFinished; deployed, or with `wait`, a long poll.',
    z.enum(['1', 'true']).optional(),
  ),
  wait: described(
    'With `follow`: answer as soon as events follow the cursor, or after this many seconds (at most 20) with none.',
    z
      .string()
      .regex(/^\d+$/, { message: 'must be a whole number of seconds' })
      .transform(Number)
      .pipe(z.number().int().min(0).max(MAX_WAIT_SECONDS))
      .optional(),
  ),
});

export const stepsQuery = z.strictObject({ cursor: cursorField, limit: limitField(2000) });

/** Approvals come oldest first in pages of up to this many (the default too: a queue is read from its head). */
export const MAX_APPROVAL_PAGE = 200;
export const listApprovalsQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  runId: z.string().min(1).optional(),
  limit: limitField(MAX_APPROVAL_PAGE),
  cursor: cursorField,
});

export const invalidateBody = z.strictObject({ reason: nonBlank(2000).optional() });

export const compensationActionBody = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('retry') }),
  z.strictObject({ action: z.literal('resolve'), note: nonBlank(2000) }),
]);

/**
 * `POST /runs/{id}/budget`: the limits to raise, each to a value larger than the run's now. Only the types are
 * checked here: whether a value raises anything is the run's to say (422 E_LIMIT_NOT_RAISED).
 */
export const raiseBudgetBody = z.strictObject({
  maxTokens: described("The plan budget's token limit, raised to this.", z.number().int().optional()),
  maxCostUsd: described("The plan budget's dollar limit, raised to this.", z.number().optional()),
  maxSeconds: described(
    "The plan budget's seconds limit (counted from the run's creation), raised to this.",
    z.number().optional(),
  ),
  maxReplans: described('The replans the run may make, raised to this.', z.number().int().optional()),
});

/** Longest reason a person may give (it reaches the planner and the revision's record, clipped there to 200). */
export const MAX_REPLAN_REASON_LENGTH = 2000;

export const replanBody = z.strictObject({
  reason: nonBlank(MAX_REPLAN_REASON_LENGTH),
  objective: nonBlank(MAX_OBJECTIVE_LENGTH).optional(),
});

const revisionNumber = z
  .string()
  .regex(/^\d+$/, { message: 'must be a non-negative integer' })
  .transform(Number)
  .pipe(z.number().int().min(0).max(1_000_000));
export const planDiffQuery = z.strictObject({ from: revisionNumber.optional(), to: revisionNumber.optional() });

/** A revision in a path or a query: a positive integer. */
export const revisionParam = z
  .string()
  .regex(/^\d+$/, { message: 'must be a positive integer' })
  .transform(Number)
  .pipe(z.number().int().min(1).max(1_000_000));
export const revisionDiffQuery = z.strictObject({ against: revisionParam.optional() });

export const outputCheckBody = z.strictObject({ output: z.json() });

export const MAX_RESOURCE_KEYS = 100;
export const MAX_RESOURCE_KEY_LENGTH = 512;
const resourceKey = z.string().min(1).max(MAX_RESOURCE_KEY_LENGTH);
export const webhookBody = z.union([
  z.strictObject({ resourceKey }),
  z.strictObject({ resourceKeys: z.array(resourceKey).min(1).max(MAX_RESOURCE_KEYS) }),
]);
