import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../infra/local/main.ts';
import { localAuth } from '../../../infra/local/stack/auth.ts';
import { settingsFromEnv } from '../../../shared/config/settings.ts';

/** What `npm start` wrote to stderr and stdout, and its exit code (only for arguments refused before the boot). */
async function start(args: string[]): Promise<{ code: number; err: string; out: string }> {
  const err: string[] = [];
  const out: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const code = await main(args);
  return { code, err: err.join(''), out: out.join('') };
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const dir = mkdtempSync(join(tmpdir(), 'cairn-start-tokens-'));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const VIC = { token: 'vic-token-0123456789', subject: 'vic', roles: ['viewer'] };
const OTTO = { token: 'otto-token-0123456789', subject: 'otto', roles: ['operator'] };

describe('npm start --tokens', () => {
  it('refuses a bad tokens file with E_BAD_TOKENS_FILE, naming the file and the problem, before it boots', async () => {
    const path = file('bad.json', [{ ...VIC, roles: ['root'] }]);
    const { code, err, out } = await start(['--tokens', path]);
    expect(code).toBe(2);
    expect(err).toContain('E_BAD_TOKENS_FILE');
    expect(err).toContain(`${path}: /0/roles/0:`);
    expect(out).not.toContain('starting');
  });

  it('refuses a tokens file next to CAIRN_API_TOKEN: one way to call, not two', async () => {
    vi.stubEnv('CAIRN_API_TOKEN', 'static-token');
    const { code, err } = await start(['--tokens', file('good.json', [OTTO])]);
    expect(code).toBe(2);
    expect(err).toMatch(/--tokens \(CAIRN_TOKENS_FILE\) and CAIRN_API_TOKEN are both set/);
  });

  it('documents the flag in --help', async () => {
    const { out } = await start(['--help']);
    expect(out).toContain('--tokens FILE');
    expect(out).toContain('CAIRN_TOKENS_FILE');
  });
});

describe('localAuth', () => {
  it('is the one admin token without a tokens file, as before roles', () => {
    expect(localAuth({ token: 't0ken' }, settingsFromEnv({}))).toEqual({
      auth: { kind: 'token', token: 't0ken' },
      token: 't0ken',
    });
    expect(localAuth({}, settingsFromEnv({ CAIRN_API_TOKEN: 'from-env' })).token).toBe('from-env');
  });

  it("is the file's callers with it, the stack calling with the first that may start runs", () => {
    const auth = localAuth({ token: 'ignored' }, settingsFromEnv({ CAIRN_TOKENS_FILE: file('two.json', [VIC, OTTO]) }));
    expect(auth.auth).toEqual({ kind: 'tokens', tokens: [VIC, OTTO] });
    expect(auth.token).toBe(OTTO.token);
    expect(auth.callers).toEqual([
      { subject: 'vic', roles: ['viewer'] },
      { subject: 'otto', roles: ['operator'] },
    ]);
  });
});
