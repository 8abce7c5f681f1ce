/**
 * A signed webhook through the embedded stack, over a real socket: the secrets come from CAIRN_WEBHOOK_SECRETS and
 * the events reach a subscriber on the in-process bus through the invalidator rule's pattern.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { BUS_RULES } from '../../shared/events/bus-rules.ts';
import { signWebhook } from '../../shared/webhooks/signature.ts';
import { type LocalStack, startTestStack } from '../support/local-stack.ts';

const SECRET = 'local-prices-secret';
let stack: LocalStack;

beforeAll(async () => {
  vi.stubEnv('CAIRN_WEBHOOK_SECRETS', JSON.stringify({ prices: SECRET }));
  stack = await startTestStack();
}, 120_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  await stack?.close();
});

const deliver = (source: string, body: string, headers: Record<string, string>) =>
  fetch(`${stack.url}/webhooks/${source}`, { method: 'POST', body, headers });

describe('webhooks on the local stack', () => {
  it('publishes ResourceChanged to the invalidator rule and refuses a replay and a stranger', async () => {
    const rule = BUS_RULES.find((r) => r.name === 'ResourceChangedToInvalidator');
    if (!rule) throw new Error('no invalidator rule');
    const received: BusEnvelope[] = [];
    stack.bus.subscribe(rule.pattern, (event) => {
      received.push(event);
    });
    const body = JSON.stringify({ resourceKeys: ['repo:acme/web@main', 'doc:handbook'] });
    const headers = signWebhook(SECRET, new TextEncoder().encode(body), Math.floor(Date.now() / 1000));

    const accepted = await deliver('prices', body, headers);
    const replayed = await deliver('prices', body, headers);
    const stranger = await deliver('payroll', body, headers);
    await stack.bus.drain();

    expect([accepted.status, replayed.status, stranger.status]).toEqual([202, 200, 401]);
    expect(received.map((e) => e.detail.resourceKey)).toEqual(['repo:acme/web@main', 'doc:handbook']);
    expect(received.every((e) => e.detail.source === 'prices')).toBe(true);
  });
});
