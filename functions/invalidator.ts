/**
 * The invalidator Lambda, target of the `ResourceChangedToInvalidator` bus rule: an EventBridge `ResourceChanged`
 * event (detail parsed with the event catalog) → `invalidateResource`. Every step watching the resource key, in
 * running and in finished runs, starts a new generation with its downstream closure.
 *
 * Deliveries are at least once: the event id is the webhook's delivery id with the resource key (one delivery
 * reports several keys, each its own event; a redelivery of the same webhook repeats them), else the envelope id.
 * The event's time says when the change was reported, so an older event delivered late changes nothing.
 *
 * Environment (read by shared/config/settings.ts): CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN
 * (required); CAIRN_RUN_DEADLINE_SECONDS (a reopened run's new deadline), CAIRN_CATALOG_FILE or CAIRN_CATALOG, and
 * the coordinator's other settings (an invalidation that settles a run decides it as the coordinator would).
 */
import { z } from 'zod';
import type { Env } from '../shared/config/settings.ts';
import { ValidationError } from '../shared/errors.ts';
import { parseEventDetail } from '../shared/events/catalog.ts';
import type { InvalidateResourceResult, Invalidator } from '../shared/services/invalidator.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

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
      ...(parsed.detail.source === undefined ? {} : { source: parsed.detail.source }),
      ...(parsed.detail.tenant === undefined ? {} : { tenant: parsed.detail.tenant }),
    });
    return { ...result, eventId, resourceKey };
  };
}

/** The invalidator of the container's root, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): InvalidatorHandlerDeps {
  return { invalidator: lambdaRoot(env).invalidator };
}

export const handler = lazyHandler('invalidator', () => createHandler(defaultDeps()));
