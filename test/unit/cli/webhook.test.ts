import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../../shared/api/webhook-signature.ts';
import { run } from '../../../shared/cli/commands/webhook.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';
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
    expect(Object.keys(headersOf(result.stdout))).toEqual(['X-Cairn-Timestamp', 'X-Cairn-Signature']);
    expect(response.status).toBe(202);
  });

  it('signs the body alone with --body-only, and the API accepts it', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const result = await cairnWebhook(
      ['sign', '--body-only', '--secret', SECRET, '--timestamp', String(w.now())],
      body,
    );
    const headers = headersOf(result.stdout);
    const response = await w.post(SOURCE, body, headers);

    expect(headers['X-Cairn-Signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
    expect(response.status).toBe(202);
  });

  it('signs with the current time and the secret from CAIRN_WEBHOOK_SECRET by default', async () => {
    const body = fixture('many-keys.json');
    const before = Math.floor(Date.now() / 1000);

    const result = await cairnWebhook(['sign'], body, { CAIRN_WEBHOOK_SECRET: 'from-env' });
    const headers = headersOf(result.stdout);

    const verified = verifyWebhook({
      secret: 'from-env',
      signatureHeader: headers['X-Cairn-Signature'],
      timestampHeader: headers['X-Cairn-Timestamp'],
      body,
      nowSeconds: before,
      windowSeconds: 5,
    });
    expect(verified.ok).toBe(true);
  });

  it('prints curl arguments that stay one word each', async () => {
    const result = await cairnWebhook(
      ['sign', '--secret', 's', '--timestamp', '1893456000', '--curl'],
      new Uint8Array(),
    );

    const words = result.stdout.trim().split(/\s+/);
    expect(words).toHaveLength(4);
    expect(words[0]).toBe('-H');
    expect(words[1]).toBe('X-Cairn-Timestamp:1893456000');
    expect(words[3]).toMatch(/^X-Cairn-Signature:sha256=[0-9a-f]{64}$/);
  });

  it.each([
    ['no subcommand', [], {}],
    ['an unknown subcommand', ['verify', '--secret', 's'], {}],
    ['no secret', ['sign'], {}],
    ['a timestamp that is not Unix seconds', ['sign', '--secret', 's', '--timestamp', '2030-01-01'], {}],
    ['an unknown option', ['sign', '--secret', 's', '--algo', 'md5'], {}],
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
