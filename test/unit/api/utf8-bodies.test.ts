/**
 * Every JSON route reads its body as bytes and decodes it strictly: bytes that are not UTF-8 are refused with 400
 * E_BAD_REQUEST, as the webhook route does, instead of reaching the route as U+FFFD. The same bodies in valid UTF-8
 * are accepted, and kept as sent.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import {
  approvalRecord,
  echoStep,
  gateStep,
  gateToken,
  harness,
  planOf,
  seedRun,
  stepRecord,
  TOKEN,
} from './harness.ts';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
/** A JSON text whose one string holds `inside` (raw bytes) between "caf" and the closing quote. */
const withBytes = (before: string, inside: Uint8Array, after: string): Uint8Array =>
  concat(utf8(`${before}caf`), inside, utf8(after));

const E_ACUTE = Uint8Array.of(0xc3, 0xa9); // é, valid
const INVALID: [string, Uint8Array][] = [
  ['a byte that never occurs in UTF-8', Uint8Array.of(0xff)],
  ['a lead byte without its continuation', Uint8Array.of(0xc3, 0x28)],
  ['an overlong encoding of "/"', Uint8Array.of(0xc0, 0xaf)],
  ['an encoded UTF-16 surrogate', Uint8Array.of(0xed, 0xa0, 0x80)],
  ['a lone continuation byte', Uint8Array.of(0x80)],
  ['a sequence cut short', Uint8Array.of(0xe2, 0x82)],
];

async function deployment() {
  const overrides: Parameters<typeof harness>[0] = {
    replanRun: async ({ runId }) => ({ runId, revision: 2 }),
  };
  const h = await harness(overrides);
  await seedRun(h, 'run-a', planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] })]), [
    stepRecord('run-a', 'before', { status: 'succeeded', output: { value: 'x' } }),
    stepRecord('run-a', 'gate', { status: 'awaiting_approval' }),
  ]);
  // The gate's step execution waits on this token, as the step machine's task writes it.
  await h.store.putApproval(approvalRecord('ap1', { taskToken: await gateToken(h, 'run-a', 'gate') }));
  const app = createApp(h.deps);
  const send = (path: string, body: Uint8Array, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      body: body as Uint8Array<ArrayBuffer>,
    });
  return { h, send };
}

const plan = JSON.stringify(planOf([echoStep('a')], 'OBJ'));

/** Each JSON route, a body with a string where the bytes go, and what the route answers when they are UTF-8. */
const ROUTES: [string, (inside: Uint8Array) => Uint8Array, number][] = [
  ['/plans', (b) => withBytes('{"objective":"', b, '","directTarget":"tool:echo"}'), 200],
  ['/plans/validate', (b) => planBytes(b), 200],
  ['/runs', (b) => withBytes('{"objective":"', b, '","directTarget":"tool:echo"}'), 202],
  ['/runs/run-a/replan', (b) => withBytes('{"reason":"', b, '"}'), 202],
  ['/runs/run-a/steps/before/invalidate', (b) => withBytes('{"reason":"', b, '"}'), 202],
  ['/approvals/ap1/check', (b) => withBytes('{"output":{"approved":true,"note":"', b, '"}}'), 200],
  ['/approvals/ap1', (b) => withBytes('{"decision":"approve","comment":"', b, '"}'), 200],
];

/** The plan with its objective's bytes replaced. */
function planBytes(inside: Uint8Array): Uint8Array {
  const [head, tail] = plan.split('OBJ') as [string, string];
  return withBytes(`{"plan":${head}`, inside, `${tail}}`);
}

describe('JSON bodies that are not UTF-8', () => {
  it.each(ROUTES)('POST %s refuses them with 400 E_BAD_REQUEST', async (path, body) => {
    for (const [what, bytes] of INVALID) {
      const { send } = await deployment();
      const res = await send(path, body(bytes));
      expect(res.status, `${path}: ${what}`).toBe(400);
      expect(await res.json(), `${path}: ${what}`).toEqual({
        error: { code: 'E_BAD_REQUEST', message: 'the request body is not UTF-8 text' },
      });
    }
  });

  it.each(ROUTES)('POST %s accepts the same body in valid UTF-8', async (path, body, status) => {
    const { send } = await deployment();
    const res = await send(path, body(E_ACUTE));
    expect(res.status, await res.clone().text()).toBe(status);
  });

  it('stores and starts nothing for a refused run, and keeps the text of an accepted one as sent', async () => {
    const { h, send } = await deployment();
    const before = h.executions.starts.length;
    const refused = await send(
      '/runs',
      withBytes('{"objective":"', Uint8Array.of(0xff), '","directTarget":"tool:echo"}'),
      { 'idempotency-key': 'k-bytes' },
    );
    expect(refused.status).toBe(400);
    expect(h.executions.starts.length).toBe(before);

    const accepted = await send('/runs', withBytes('{"objective":"', E_ACUTE, ' ☕ 𝄞","directTarget":"tool:echo"}'), {
      'idempotency-key': 'k-bytes',
    });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    const view = (await (await h.request('GET', `/runs/${runId}`)).json()) as { objective: string };
    expect(view.objective).toBe('café ☕ 𝄞');
  });

  it('ignores a leading byte order mark, as before and as the webhook route does', async () => {
    const { send } = await deployment();
    const res = await send(
      '/plans',
      concat(Uint8Array.of(0xef, 0xbb, 0xbf), utf8('{"objective":"x","directTarget":"tool:echo"}')),
    );
    expect(res.status).toBe(200);
  });
});
