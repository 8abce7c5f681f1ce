import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BadTokensFileError,
  callerOfEntry,
  isBadTokensFileError,
  loadTokensFile,
  parseTokensFile,
} from '../../../shared/api/tokens-file.ts';
import { harness } from './harness.ts';

const ANA = { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator'] };
const BO = { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['approver'], groups: ['finance'], tenant: 'acme' };

/** The problems a bad file is refused with (and that it is refused with the code). */
function problemsOf(text: string): readonly string[] {
  try {
    parseTokensFile(text, 'tokens.json');
  } catch (error) {
    expect(isBadTokensFileError(error)).toBe(true);
    expect((error as BadTokensFileError).name).toBe('E_BAD_TOKENS_FILE');
    expect((error as Error).message).toMatch(/^tokens\.json: /);
    return (error as BadTokensFileError).problems;
  }
  throw new Error('the file was taken');
}

describe('parseTokensFile', () => {
  it('takes an array of callers with their roles, groups and tenant', () => {
    const entries = parseTokensFile(JSON.stringify([ANA, BO]));
    expect(entries).toEqual([ANA, BO]);
    expect(callerOfEntry(entries[1] as (typeof entries)[number])).toEqual({
      subject: 'bo',
      roles: new Set(['approver']),
      groups: ['finance'],
      tenant: 'acme',
      shared: false,
    });
  });

  it('refuses what is not JSON, or not a list of callers', () => {
    expect(problemsOf('[{')[0]).toMatch(/^not JSON/);
    expect(problemsOf('{"token": "x"}')).toEqual([expect.stringMatching(/^\(root\): /)]);
    expect(problemsOf('[]')).toEqual(['(root): must list at least one caller']);
    expect(problemsOf('[1, 2]')).toHaveLength(2);
  });

  it('names every bad field by entry, and never echoes a token', () => {
    const problems = problemsOf(
      JSON.stringify([
        { ...ANA, roles: ['operator', 'superuser'] },
        { token: 'short', subject: 'x y', roles: [] },
        { ...BO, colour: 'blue' },
      ]),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^\/0\/roles\/1: /),
      '/1/token: must be at least 16 characters',
      '/1/subject: must be 1..256 visible ASCII characters',
      expect.stringMatching(/^\/2: .*colour/),
    ]);
    expect(problems.join(' ')).not.toContain('short');
  });

  it('refuses a missing subject or roles, and two callers with one token', () => {
    expect(problemsOf(JSON.stringify([{ token: ANA.token, roles: [] }]))).toEqual([
      expect.stringMatching(/^\/0\/subject: /),
    ]);
    expect(problemsOf(JSON.stringify([{ token: ANA.token, subject: 'ana' }]))).toEqual([
      expect.stringMatching(/^\/0\/roles: /),
    ]);
    expect(problemsOf(JSON.stringify([ANA, { ...BO, token: ANA.token }]))).toEqual([
      '/1/token: is the same token as entry 0',
    ]);
  });

  it('refuses a token with a space (a bearer token cannot carry one)', () => {
    expect(problemsOf(JSON.stringify([{ ...ANA, token: 'has a space in it, long' }]))).toEqual([
      '/0/token: must be visible ASCII characters (no spaces)',
    ]);
  });
});

describe('loadTokensFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-tokens-'));

  it('reads the file, or names it when it cannot', () => {
    const path = join(dir, 'tokens.json');
    writeFileSync(path, JSON.stringify([ANA]));
    expect(loadTokensFile(path)).toEqual([ANA]);
    const missing = join(dir, 'missing.json');
    expect(() => loadTokensFile(missing)).toThrow(BadTokensFileError);
    expect(() => loadTokensFile(missing)).toThrow(/missing\.json: cannot be read/);
  });
});

describe('a stack with a tokens file', () => {
  it("records each caller's own subject, and refuses the tokens nobody holds", async () => {
    const h = await harness({ auth: { kind: 'tokens', tokens: parseTokensFile(JSON.stringify([ANA, BO])) } });
    const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const me = await h.request('GET', '/me', as(BO.token));
    expect(await me.json()).toEqual({ subject: 'bo', roles: ['approver'], groups: ['finance'], tenant: 'acme' });
    const started = await h.request('POST', '/runs', {
      ...as(ANA.token),
      body: { objective: 'say hello', directTarget: 'tool:echo' },
    });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    expect((await h.store.getRun(runId))?.startedBy).toBe('ana');
    const view = (await (await h.request('GET', `/runs/${runId}`, as(ANA.token))).json()) as { startedBy?: string };
    expect(view.startedBy).toBe('ana');
    // Bo is in another tenant (acme): ana's run is not there for him.
    expect((await h.request('GET', `/runs/${runId}`, as(BO.token))).status).toBe(404);
    for (const token of ['test-token', `${ANA.token}x`, ANA.token.slice(0, -1)]) {
      const res = await h.request('GET', '/runs', as(token));
      expect(res.status, token).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_UNAUTHORIZED');
    }
  });
});
