/**
 * The embedded stack on a data directory keeps its webhook replay memory there: a signed delivery accepted before a
 * restart is still answered as a duplicate after it, and publishes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { signWebhook } from '../../shared/webhooks/signature.ts';
import { type LocalStack, startTestStack } from '../support/local-stack.ts';

const SECRET = 'restart-prices-secret';
const dataDir = mkdtempSync(join(tmpdir(), 'cairn-webhook-replay-'));

beforeAll(() => {
  vi.stubEnv('CAIRN_WEBHOOK_SECRETS', JSON.stringify({ prices: SECRET }));
});

afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(dataDir, { recursive: true, force: true });
});

const deliver = (stack: LocalStack, body: string, headers: Record<string, string>) =>
  fetch(`${stack.url}/webhooks/prices`, { method: 'POST', body, headers });

describe('webhook replay memory on a data directory', () => {
  it('refuses a delivery seen before a restart as a duplicate after it, publishing nothing', async () => {
    const body = JSON.stringify({ resourceKey: 'price:acme' });
    const headers = signWebhook(SECRET, new TextEncoder().encode(body), Math.floor(Date.now() / 1000));

    const first = await startTestStack({ dataDir });
    let accepted: Response;
    try {
      accepted = await deliver(first, body, headers);
      await first.settled();
    } finally {
      await first.close();
    }

    const second = await startTestStack({ dataDir });
    try {
      const published: BusEnvelope[] = [];
      second.bus.subscribe({ 'detail-type': ['ResourceChanged'] }, (event) => {
        published.push(event);
      });
      const replayed = await deliver(second, body, headers);
      await second.bus.drain();

      expect(accepted.status).toBe(202);
      expect(replayed.status).toBe(200);
      expect(await replayed.json()).toMatchObject({ accepted: true, duplicate: true });
      expect(published).toEqual([]);
    } finally {
      await second.close();
    }
  }, 120_000);
});
