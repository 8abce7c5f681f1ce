/**
 * The typed event catalog: one zod schema per `detail-type`, source `cairn`. Consumers can subscribe to these from
 * their own EventBridge rules; cairn's own rules (bus-rules.ts) use them too. Parse at the edges with `parseEvent`.
 */
import { z } from 'zod';
import { boundIssues, joinIssues } from '../plan/bounded-text.ts';
import { BLOCKED_BY_SAMPLE, EVENT_MESSAGE_CHARS, idsBytes, LISTED_IDS_BYTES } from './bounded-details.ts';

const runRef = { runId: z.string().min(1) };
const stepRef = { ...runRef, stepId: z.string().min(1), generation: z.number().int().min(1) };
/** A step's error as events carry it: no `details`, the message clipped (bounded-details.ts). */
const error = z.object({
  code: z.string(),
  message: z.string().max(EVENT_MESSAGE_CHARS),
  retryable: z.boolean().optional(),
});

const raisedLimits = z.object({
  maxTokens: z.number().int().optional(),
  maxCostUsd: z.number().optional(),
  maxSeconds: z.number().optional(),
  maxReplans: z.number().int().optional(),
});

export const EVENT_SCHEMAS = {
  /** A run that waited `queued` for one of its tenant's running slots got one: it starts planning. */
  RunAdmitted: z.object({ ...runRef }),
  RunStarted: z.object({ ...runRef, objective: z.string(), revision: z.number().int(), steps: z.number().int() }),
  StepStarted: z.object({ ...stepRef, target: z.string().nullable(), attempt: z.number().int().optional() }),
  StepRetrying: z.object({ ...stepRef, attempt: z.number().int(), delaySeconds: z.number(), error }),
  StepSucceeded: z.object({ ...stepRef, attempts: z.number().int(), confidence: z.number().nullable().optional() }),
  StepFailed: z.object({ ...stepRef, attempts: z.number().int(), error, final: z.boolean() }),
  StepSkipped: z.object({ ...stepRef, reason: z.string() }),
  /** The upstream causes that keep the step from ever running: a sample of them and their count (bounded-details.ts). */
  StepBlocked: z.object({
    ...stepRef,
    blockedBy: z.array(z.string()).min(1).max(BLOCKED_BY_SAMPLE),
    blockedByCount: z.number().int().min(1),
  }),
  /** A finished mutating step's compensation (saga): started, done, or failed for good (the run pauses). */
  StepCompensation: z.object({
    ...stepRef,
    state: z.enum(['compensating', 'compensated', 'compensation_failed']),
    target: z.string(),
    error: error.optional(),
    /** A person's retry or resolution by hand of a compensation that failed: who acted. */
    by: z.string().nullable().optional(),
  }),
  ApprovalRequested: z.object({
    ...stepRef,
    approvalId: z.string(),
    kind: z.enum(['approval', 'review', 'revision']),
    deadline: z.string(),
  }),
  ApprovalDecided: z.object({
    ...stepRef,
    approvalId: z.string(),
    decision: z.enum(['approve', 'reject', 'edit', 'expired']),
    by: z.string().optional(),
  }),
  /** `requestedBy`: a person's replan, who asked for it. */
  PlanRevised: z.object({
    ...runRef,
    revision: z.number().int(),
    reason: z.string(),
    requestedBy: z.string().optional(),
  }),
  /**
   * Steps that start a new generation: one invalidation is announced in `parts` events, each naming a slice of its
   * `total` steps (bounded-details.ts says why), so that no detail grows with the plan.
   */
  StepsInvalidated: z.object({
    ...runRef,
    stepIds: z
      .array(z.string())
      .refine((ids) => idsBytes(ids) <= LISTED_IDS_BYTES, { message: `lists more than ${LISTED_IDS_BYTES} bytes` }),
    part: z.number().int().min(1),
    parts: z.number().int().min(1),
    total: z.number().int().min(0),
    reason: z.string(),
    /** Who asked: a person's subject, or `webhook:<source>` for a resource change. */
    requestedBy: z.string().optional(),
  }),
  /** A finished run reopened (invalidation, a person's replan): it runs again and will finish again. */
  RunReopened: z.object({ ...runRef, reopened: z.number().int().min(1), reason: z.string() }),
  RunFinished: z.object({
    ...runRef,
    state: z.enum(['complete', 'failed', 'paused', 'cancelled']),
    reason: z.string(),
    /** A cancelled run: who asked for the cancellation. */
    requestedBy: z.string().optional(),
  }),
  /**
   * A person raised a run's limits (`POST /runs/{id}/budget`): the plan's budget (tokens, dollars, seconds) and the
   * replan limit they named, to `limits`, from `previous`. The run was paused for its budget or its replan limit and
   * goes on; with `maxReplans` raised the replanner is asked again about the failures that stand.
   */
  BudgetRaised: z.object({
    ...runRef,
    limits: raisedLimits,
    previous: raisedLimits,
    requestedBy: z.string(),
  }),
  /**
   * A budget (the plan's, or a step's when `stepId` is given) reached its soft threshold (`warnAt` × `limit`) on one
   * dimension: published once per budget and dimension.
   */
  BudgetThreshold: z.object({
    ...runRef,
    stepId: z.string().optional(),
    dimension: z.enum(['tokens', 'costUsd']),
    limit: z.number(),
    spent: z.number(),
    warnAt: z.number(),
  }),
  /**
   * The plan's budget (of revision `revision`) was exhausted and nothing of the run is in flight any more: published
   * once per revision, whatever `onExhausted` says; under `replan` it asks the replanner for a cheaper revision.
   */
  BudgetExhausted: z.object({
    ...runRef,
    revision: z.number().int().min(1),
    onExhausted: z.enum(['fail', 'pause', 'replan']),
    exhausted: z.array(
      z.object({ dimension: z.enum(['tokens', 'costUsd', 'seconds']), limit: z.number(), spent: z.number() }),
    ),
  }),
  ResourceChanged: z.object({
    resourceKey: z.string().min(1),
    source: z.string().optional(),
    /** Whose resource it is (absent: the default tenant's): only that tenant's runs watching it are told. */
    tenant: z.string().optional(),
    /** The webhook delivery that reported the change: equal on a redelivery, so consumers can tell duplicates. */
    deliveryId: z.string().optional(),
  }),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export type EventDetail<T extends EventType> = z.infer<(typeof EVENT_SCHEMAS)[T]>;
export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];

export const isEventType = (name: string): name is EventType => Object.hasOwn(EVENT_SCHEMAS, name);

/** Parses an event's detail against its detail-type's schema; unknown keys are kept (consumers may add fields). */
export function parseEventDetail<T extends EventType>(
  type: T,
  detail: unknown,
): { ok: true; detail: EventDetail<T> } | { ok: false; message: string } {
  const result = EVENT_SCHEMAS[type].safeParse(detail);
  if (result.success) return { ok: true, detail: result.data as EventDetail<T> };
  const issues = boundIssues(result.error.issues, (i) => `${i.path.join('.')}: ${i.message}`);
  return { ok: false, message: joinIssues(issues) };
}
