/** Webhook test support: an app with signed webhooks (Standard Webhooks by default), a recording publisher, and signed requests from fixtures. */
import { readFileSync } from 'node:fs';
import { createMemoryReplayGuard } from '../../../shared/adapters/local/webhooks.ts';
import { createApp } from '../../../shared/api/app.ts';
import type { ApiDeps } from '../../../shared/api/deps.ts';
import type { DomainEvent, EventPublisher } from '../../../shared/ports/events.ts';
import type { WebhookConfig } from '../../../shared/ports/webhooks.ts';
import { signWebhook } from '../../../shared/webhooks/signature.ts';
import { harness } from './harness.ts';

export const SOURCE = 'prices';
export const SECRET = 'prices-secret-0123456789';
export const OTHER_SECRET = 'another-secret-9876543210';

export const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../fixtures/webhooks/${name}`, import.meta.url)));

export class RecordingPublisher implements EventPublisher {
  readonly published: DomainEvent[] = [];
  failNext = 0;
  async publish(events: readonly DomainEvent[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('the bus is down');
    }
    this.published.push(...events);
  }
}

export interface WebhookHarness {
  readonly events: RecordingPublisher;
  readonly deps: ApiDeps;
  /** Seconds since the epoch on the harness clock. */
  now(): number;
  setNow(seconds: number): void;
  post(source: string, body: Uint8Array | string, headers?: Record<string, string>): Promise<Response>;
  /** A delivery signed (Standard Webhooks) with `secret` at `timestamp` (default: now), id `id` (default: new). */
  signed(
    body: Uint8Array | string,
    options?: { secret?: string; timestamp?: number; source?: string; id?: string },
  ): Promise<Response>;
}

export const bytes = (body: Uint8Array | string): Uint8Array =>
  typeof body === 'string' ? new TextEncoder().encode(body) : body;

export async function webhookHarness(
  options: { webhooks?: Partial<WebhookConfig> | null; events?: EventPublisher; extra?: Partial<ApiDeps> } = {},
): Promise<WebhookHarness> {
  const events = new RecordingPublisher();
  const h = await harness();
  const clock = () => h.now;
  const webhooks: WebhookConfig = {
    secrets: async (source) => (source === SOURCE ? SECRET : undefined),
    replayGuard: createMemoryReplayGuard({ clock }),
    ...options.webhooks,
  };
  const deps: ApiDeps = {
    ...h.deps,
    events: options.events ?? events,
    ...(options.webhooks === null ? {} : { webhooks }),
    ...options.extra,
  };
  const app = createApp(deps);
  const post = async (source: string, body: Uint8Array | string, headers: Record<string, string> = {}) =>
    app.request(`/webhooks/${source}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: bytes(body),
    });
  const now = () => Math.floor(h.now.getTime() / 1000);
  return {
    events,
    deps,
    now,
    setNow: (seconds) => {
      h.now = new Date(seconds * 1000);
    },
    post,
    signed: (body, o = {}) =>
      post(o.source ?? SOURCE, body, {
        ...signWebhook(o.secret ?? SECRET, bytes(body), o.timestamp ?? now(), ...(o.id === undefined ? [] : [o.id])),
      }),
  };
}
