/**
 * The invalidator Lambda, target of the `ResourceChangedToInvalidator` bus rule: an EventBridge `ResourceChanged`
 * event (detail parsed with the event catalog) → `invalidateResource`. Every step watching the resource key, in
 * running and in finished runs, starts a new generation with its downstream closure.
 *
 * Deliveries are at least once: the event id is the webhook's delivery id with the resource key (one delivery
 * reports several keys, each its own event; a redelivery of the same webhook repeats them), else the envelope id.
 * The event's time says when the change was reported, so an older event delivered late changes nothing.
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN, CAIRN_EVENT_BUS_NAME (required);
 * CAIRN_RUN_DEADLINE_SECONDS (a reopened run's new deadline; default 86400), CAIRN_CATALOG_FILE or CAIRN_CATALOG.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { sfnExecutionsFromEnv } from '../shared/adapters/aws/sfn-executions.ts';
import { catalogFromEnv, type Env, limitsFromEnv, storeFromEnv } from '../shared/api/lambda-support.ts';
import { DEFAULT_RETRY_BASE_SECONDS, DEFAULT_RETRY_CAP_SECONDS } from '../shared/engine/retry.ts';
import { ValidationError } from '../shared/errors.ts';
import { parseEventDetail } from '../shared/events/catalog.ts';
import {
  createInvalidator,
  type InvalidateResourceResult,
  type Invalidator,
  type InvalidatorDeps,
} from '../shared/services/invalidator.ts';
import { observe } from './observability.ts';

export const DEFAULT_RUN_DEADLINE_SECONDS = 86_400;

export interface InvalidatorHandlerDeps {
  readonly invalidator: Pick<Invalidator, 'invalidateResource'>;
}

const envelopeSchema = z.object({
  id: z.string().min(1),
  'detail-type': z.literal('ResourceChanged'),
  time: z.string().optional(),
  detail: z.unknown(),
});

/** What the handler answers (logged by Lambda; the bus ignores it). */
export interface InvalidatorAnswer extends InvalidateResourceResult {
  readonly eventId: string;
  readonly resourceKey: string;
}

function invalid(message: string): ValidationError {
  return new ValidationError(`invalidator event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
}

/** The id every delivery of the same change shares. */
export function changeEventId(envelopeId: string, detail: { resourceKey: string; deliveryId?: string | undefined }) {
  return detail.deliveryId === undefined ? envelopeId : `delivery:${detail.deliveryId}#${detail.resourceKey}`;
}

export function createHandler(deps: InvalidatorHandlerDeps) {
  return async (event: unknown): Promise<InvalidatorAnswer> => {
    const envelope = envelopeSchema.safeParse(event);
    if (!envelope.success)
      throw invalid(envelope.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const parsed = parseEventDetail('ResourceChanged', envelope.data.detail);
    if (!parsed.ok) throw invalid(parsed.message);
    const { resourceKey } = parsed.detail;
    const eventId = changeEventId(envelope.data.id, parsed.detail);
    const result = await deps.invalidator.invalidateResource({
      resourceKey,
      eventId,
      changedAt: envelope.data.time,
    });
    return { ...result, eventId, resourceKey };
  };
}

/** The invalidator's dependencies with AWS adapters, from the environment. */
export function invalidatorDepsFromEnv(env: Env): InvalidatorDeps {
  const deadline = Number(env.CAIRN_RUN_DEADLINE_SECONDS ?? DEFAULT_RUN_DEADLINE_SECONDS);
  if (!Number.isFinite(deadline) || deadline < 1)
    throw new Error(`CAIRN_RUN_DEADLINE_SECONDS must be a positive number, got "${env.CAIRN_RUN_DEADLINE_SECONDS}"`);
  return {
    store: storeFromEnv(env),
    executions: sfnExecutionsFromEnv(env),
    catalog: catalogFromEnv(env),
    clock: () => new Date(),
    newId: randomUUID,
    // Invalidation starts steps and reopens runs; it never retries, verifies or retains traces itself.
    config: {
      runDeadlineSeconds: Math.floor(deadline),
      retryBaseSeconds: DEFAULT_RETRY_BASE_SECONDS,
      retryCapSeconds: DEFAULT_RETRY_CAP_SECONDS,
      ...limitsFromEnv(env),
      traceRetention: 'last',
    },
  };
}

export function defaultDeps(env: Env = process.env): InvalidatorHandlerDeps {
  return { invalidator: createInvalidator(invalidatorDepsFromEnv(env)) };
}

// Built on the first invocation, so importing createHandler (tests, the embedded runtime) reads no environment.
let built: ReturnType<typeof createHandler> | undefined;
export const handler = observe('invalidator', (event: unknown): Promise<InvalidatorAnswer> => {
  built ??= createHandler(defaultDeps());
  return built(event);
});
