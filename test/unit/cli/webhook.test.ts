import { describe, expect, it } from 'vitest';
import { run } from '../../../shared/cli/commands/webhook.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';
import { verifyWebhook } from '../../../shared/webhooks/signature.ts';
import { fixture, SECRET, SOURCE, webhookHarness } from '../api/webhook-support.ts';

async function cairnWebhook(args: string[], stdin: Uint8Array, env: Record<string, string> = {}, entry = run) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env,
    cwd: '.',
    readStdin: async () => stdin,
  };
  const code = await entry(args, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** Parses `Name: value` lines into headers. */
const headersOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
  );

describe('cairn webhook sign', () => {
  it('prints the headers as one JSON object with --json, and refuses --json with --curl', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const result = await cairnWebhook(['sign', '--secret', SECRET, '--timestamp', String(w.now()), '--json'], body);
    const response = await w.post(SOURCE, body, JSON.parse(result.stdout) as Record<string, string>);
    const both = await cairnWebhook(['sign', '--secret', SECRET, '--json', '--curl'], body);

    expect(result.code).toBe(0);
    expect(response.status).toBe(202);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining('pick one')]);
  });

  it('prints the two headers of a delivery the API accepts', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const result = await cairnWebhook(['sign', '--secret', SECRET, '--timestamp', String(w.now())], body);
    const response = await w.post(SOURCE, body, headersOf(result.stdout));

    expect(result.code).toBe(0);
    expect(Object.keys(headersOf(result.stdout))).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(response.status).toBe(202);
  });

  it('prints the timestamp-bound X-Cairn headers with --legacy, and the API accepts them', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const result = await cairnWebhook(['sign', '--legacy', '--secret', SECRET, '--timestamp', String(w.now())], body);
    const headers = headersOf(result.stdout);
    const response = await w.post(SOURCE, body, headers);

    expect(Object.keys(headers)).toEqual(['X-Cairn-Timestamp', 'X-Cairn-Signature']);
    expect(response.status).toBe(202);
  });

  it("reproduces the specification's published signature with --id and --timestamp", async () => {
    const vector = JSON.parse(new TextDecoder().decode(fixture('standard-vector.json'))) as Record<string, string>;

    const result = await cairnWebhook(
      [
        'sign',
        '--secret',
        vector.secret ?? '',
        '--id',
        vector.id ?? '',
        '--timestamp',
        vector.timestamp ?? '',
        '--json',
      ],
      new TextEncoder().encode(vector.body),
    );

    expect(JSON.parse(result.stdout)).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': vector.timestamp,
      'webhook-signature': vector.signature,
    });
  });

  it('prints a new whsec_ secret of 32 bytes that signs and verifies', async () => {
    const first = await cairnWebhook(['secret'], new Uint8Array());
    const second = await cairnWebhook(['secret'], new Uint8Array());

    const secret = first.stdout.trim();
    expect(first.code).toBe(0);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(second.stdout.trim()).not.toBe(secret);
  });

  it('signs with the current time and the secret from CAIRN_WEBHOOK_SECRET by default', async () => {
    const body = fixture('many-keys.json');
    const before = Math.floor(Date.now() / 1000);

    const result = await cairnWebhook(['sign'], body, { CAIRN_WEBHOOK_SECRET: 'from-env' });
    const headers = headersOf(result.stdout);

    const verified = verifyWebhook({
      secret: 'from-env',
      header: (name) => headers[name],
      body,
      nowSeconds: before,
      toleranceSeconds: 5,
    });
    expect(verified).toMatchObject({ scheme: 'standard', replayId: `id:${headers['webhook-id']}` });
    expect(headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
  });

  it('prints curl arguments that stay one word each', async () => {
    const result = await cairnWebhook(
      ['sign', '--secret', 's', '--id', 'msg_1', '--timestamp', '1893456000', '--curl'],
      new Uint8Array(),
    );

    const words = result.stdout.trim().split(/\s+/);
    expect(words).toHaveLength(6);
    expect(words.filter((_, i) => i % 2 === 0)).toEqual(['-H', '-H', '-H']);
    expect(words[1]).toBe('webhook-id:msg_1');
    expect(words[3]).toBe('webhook-timestamp:1893456000');
    expect(words[5]).toMatch(/^webhook-signature:v1,[A-Za-z0-9+/]{43}=$/);
  });

  it.each([
    ['no subcommand', [], {}],
    ['an unknown subcommand', ['verify', '--secret', 's'], {}],
    ['no secret', ['sign'], {}],
    ['a timestamp that is not Unix seconds', ['sign', '--secret', 's', '--timestamp', '2030-01-01'], {}],
    ['an unknown option', ['sign', '--secret', 's', '--algo', 'md5'], {}],
    ['the body-only form, which the API refuses', ['sign', '--secret', 's', '--body-only'], {}],
    ['a whsec_ secret that is not base64', ['sign', '--secret', 'whsec_not base64!'], {}],
    ['a message id with a space', ['sign', '--secret', 's', '--id', 'msg 1'], {}],
  ])('exits 2 on %s', async (_name, args, env) => {
    const result = await cairnWebhook(args, new Uint8Array(), env);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^cairn webhook: /);
  });

  it('is registered as a cairn command with help', async () => {
    const help = await cairnWebhook(['webhook', '--help'], new Uint8Array(), {}, main);

    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: cairn webhook sign/);
  });
});
