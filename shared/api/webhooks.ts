/**
 * `POST /webhooks/{source}`: an outside system says resources changed. Not behind the bearer token (senders hold a
 * per-source signing secret instead): the Standard Webhooks signature (or cairn's timestamp-bound X-Cairn-* one,
 * shared/webhooks/signature.ts), the timestamp tolerance and the replay memory are the whole of its authentication.
 * Every refusal before the signature is proven is the same 401, whatever the reason (an unknown source too), so the
 * answer never tells which sources exist. Only then is the body parsed (400) and one ResourceChanged published per
 * key (202); a delivery seen before (the same `webhook-id`, or the same X-Cairn signature, within the tolerance) is
 * acknowledged (200) and publishes nothing.
 */

import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DEFAULT_REPLAY_WINDOW_SECONDS, MAX_REPLAY_WINDOW_SECONDS } from '../config/defaults.ts';
import type { EventDetail } from '../events/catalog.ts';
import type { DomainEvent, EventPublisher } from '../ports/events.ts';
import type { WebhookConfig } from '../ports/webhooks.ts';
import { isWebhookRejectedError } from '../webhooks/errors.ts';
import { verifyWebhook } from '../webhooks/signature.ts';
import { decodeBody, parseJsonBody, parseWith } from './body.ts';
import { serve } from './contract/route.ts';
import { receiveWebhook } from './contract/routes/service.ts';
import { webhookBody } from './contract/schemas/requests.ts';
import type { ApiEnv } from './deps.ts';
import { ApiError, errorBody } from './errors.ts';

/** Change notifications are small; a larger body is refused (413) before it is read into memory. */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

/** Source names as they appear in a path and in a secret name; anything else cannot have a secret. */
const SOURCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface WebhookRouteDeps {
  readonly webhooks?: WebhookConfig | undefined;
  readonly events?: EventPublisher | undefined;
  readonly clock: () => Date;
}

/** One answer for every authentication failure: it must not differ by reason (the cause stays on the error). */
const refused = (cause?: unknown): ApiError =>
  new ApiError(401, 'E_UNAUTHORIZED', 'invalid signature', cause === undefined ? {} : { cause });

/** A stable id of one delivery (source + what the replay memory knows it by), carried on its events. */
export const deliveryIdOf = (source: string, replayId: string): string =>
  createHash('sha256').update(`${source}#${replayId}`, 'utf8').digest('hex').slice(0, 32);

function verified(input: Parameters<typeof verifyWebhook>[0]) {
  try {
    return verifyWebhook(input);
  } catch (error) {
    if (isWebhookRejectedError(error)) throw refused(error);
    throw error;
  }
}

function windowOf(config: WebhookConfig | undefined): number {
  const window = config?.replayWindowSeconds ?? DEFAULT_REPLAY_WINDOW_SECONDS;
  if (!Number.isInteger(window) || window < 1 || window > MAX_REPLAY_WINDOW_SECONDS)
    throw new Error(`webhooks: replayWindowSeconds must be an integer in 1..${MAX_REPLAY_WINDOW_SECONDS}`);
  return window;
}

function parseBody(raw: Uint8Array): string[] {
  const body = parseWith(webhookBody, parseJsonBody(decodeBody(raw)));
  // One event per distinct key: a key listed twice changed once.
  return [...new Set('resourceKey' in body ? [body.resourceKey] : body.resourceKeys)];
}

/** Without a webhook configuration every delivery is refused like one for an unknown source. */
export function webhookRoutes(deps: WebhookRouteDeps): Hono<ApiEnv> {
  const config = deps.webhooks;
  const window = windowOf(config);
  if (config && !deps.events) throw new Error('webhooks: an event publisher (deps.events) is required');
  const app = new Hono<ApiEnv>();

  const limit = bodyLimit({
    maxSize: MAX_WEBHOOK_BODY_BYTES,
    onError: (c) => c.json(errorBody('E_TOO_LARGE', `the request body exceeds ${MAX_WEBHOOK_BODY_BYTES} bytes`), 413),
  });
  serve(
    app,
    receiveWebhook,
    async (c) => {
      const source = c.req.param('source');
      // The raw bytes, read once: the signature is over exactly these, before any parsing.
      const raw = new Uint8Array(await c.req.arrayBuffer());
      if (raw.byteLength > MAX_WEBHOOK_BODY_BYTES)
        return c.json(errorBody('E_TOO_LARGE', `the request body exceeds ${MAX_WEBHOOK_BODY_BYTES} bytes`), 413);

      const known = config !== undefined && SOURCE_PATTERN.test(source);
      const secret = known ? await config.secrets(source) : undefined;
      const now = Math.floor(deps.clock().getTime() / 1000);
      const delivery = verified({
        secret: secret === '' ? undefined : secret,
        header: (name) => c.req.header(name),
        body: raw,
        nowSeconds: now,
        toleranceSeconds: window,
      });
      if (!config || !deps.events) throw refused();

      const resourceKeys = parseBody(raw);
      const deliveryId = deliveryIdOf(source, delivery.replayId);
      const replayKey = `webhook#${source}#${delivery.replayId}`;
      // Refused past timestamp + tolerance anyway, so the memory need not outlive that (nor the clock, if ahead).
      const first = await config.replayGuard.firstSeen(replayKey, Math.max(delivery.timestamp, now) + window + 1);
      if (!first) return c.json({ accepted: true, duplicate: true, deliveryId }, 200);

      const events: DomainEvent[] = resourceKeys.map((key) => {
        const detail: EventDetail<'ResourceChanged'> = { resourceKey: key, source, deliveryId };
        const tenant = config.tenants?.get(source);
        if (tenant !== undefined) detail.tenant = tenant;
        return { detailType: 'ResourceChanged', detail };
      });
      try {
        await deps.events.publish(events);
      } catch (error) {
        // The sender will retry: that retry must not be taken for a replay. A failed release must not hide the cause.
        await config.replayGuard.release?.(replayKey).catch(() => undefined);
        throw error;
      }
      return c.json({ accepted: true, resourceKeys, deliveryId }, 202);
    },
    { before: [limit] },
  );
  return app;
}
