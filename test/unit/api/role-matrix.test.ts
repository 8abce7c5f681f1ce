/**
 * The role × route matrix, walked through the HTTP API: every route of the contract, called by a token of each role
 * (and one with no role), against the table below. `ok` means the route did its own work (its answer, a 404 for the
 * id that names nothing, a 400 for the empty body: anything but a refusal); `403` means 403 E_FORBIDDEN, naming the
 * role the route needs. The table is written out by hand, so a change to the route table (contract/roles.ts) that
 * is not meant shows here.
 */
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../shared/api/contract/routes/index.ts';
import type { TokenEntry } from '../../../shared/api/tokens-file.ts';
import { harness } from './harness.ts';

const MATRIX = `
route                                              viewer    operator  approver  admin     no-role
POST /runs                                         403       ok        403       ok        403
GET /runs                                          ok        ok        ok        ok        403
GET /runs/{runId}                                  ok        ok        ok        ok        403
GET /runs/{runId}/plan                             ok        ok        ok        ok        403
GET /runs/{runId}/events                           ok        ok        ok        ok        403
POST /runs/{runId}/cancel                          403       ok        403       ok        403
GET /runs/{runId}/commands/{commandId}             ok        ok        ok        ok        403
POST /runs/{runId}/steps/{stepId}/invalidate       403       ok        403       ok        403
POST /runs/{runId}/steps/{stepId}/compensation     403       ok        403       ok        403
POST /runs/{runId}/replan                          403       ok        403       ok        403
POST /runs/{runId}/budget                          403       ok        403       ok        403
GET /runs/{runId}/plan/diff                        ok        ok        ok        ok        403
GET /runs/{runId}/steps/{stepId}                   ok        ok        ok        ok        403
GET /runs/{runId}/revisions                        ok        ok        ok        ok        403
GET /runs/{runId}/revisions/{revision}/diff        ok        ok        ok        ok        403
GET /runs/{runId}/timeline                         ok        ok        ok        ok        403
POST /plans                                        403       ok        403       ok        403
GET /plans/{jobId}                                 ok        ok        ok        ok        403
POST /plans/validate                               ok        ok        ok        ok        403
GET /approvals                                     ok        ok        ok        ok        403
GET /approvals/{id}                                ok        ok        ok        ok        403
POST /approvals/{id}                               403       403       ok        ok        403
POST /approvals/{id}/check                         403       403       ok        ok        403
GET /health                                        ok        ok        ok        ok        ok
GET /openapi.json                                  ok        ok        ok        ok        ok
GET /me                                            ok        ok        ok        ok        ok
POST /webhooks/{source}                            ok        ok        ok        ok        ok
GET /conformance/ledger                            ok        ok        ok        ok        403
`;

const COLUMNS = ['viewer', 'operator', 'approver', 'admin', 'no-role'] as const;
const expected = new Map(
  MATRIX.trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const cells = line.trim().split(/\s+/);
      const route = `${cells[0]} ${cells[1]}`;
      return [route, Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i + 2]]))] as const;
    }),
);

const TOKENS: TokenEntry[] = COLUMNS.map((column) => ({
  token: `token-of-the-${column}-caller`,
  subject: column,
  roles: column === 'no-role' ? [] : [column],
}));

const SAMPLE_PARAMS: Record<string, string> = {
  runId: 'run-none',
  stepId: 'step-none',
  id: 'ap-none',
  jobId: 'job-none',
  revision: '1',
  source: 'github',
};

const samplePath = (path: string): string =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE_PARAMS[name] ?? name);

describe('the role × route matrix', () => {
  it('lists every route of the contract, once', () => {
    const routes = ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`);
    expect([...expected.keys()].sort()).toEqual([...routes].sort());
  });

  it('is what the API answers, for each role on each route', async () => {
    const h = await harness({ auth: { kind: 'tokens', tokens: TOKENS }, ledger: { entries: () => [] } });
    const seen: string[] = [];
    for (const route of ROUTES) {
      const key = `${route.method.toUpperCase()} ${route.path}`;
      for (const [i, column] of COLUMNS.entries()) {
        const res = await h.request(route.method.toUpperCase(), samplePath(route.path), {
          headers: { authorization: `Bearer ${TOKENS[i]?.token}` },
          ...(route.method === 'post' ? { body: {} } : {}),
        });
        const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
        const refused = res.status === 403 && body.error?.code === 'E_FORBIDDEN';
        seen.push(`${key} ${column} ${refused ? '403' : 'ok'}`);
        if (refused) expect(body.error?.message, `${key} ${column}`).toMatch(/^this needs the (\w+) role/);
      }
    }
    const wanted = [...expected].flatMap(([key, row]) => COLUMNS.map((column) => `${key} ${column} ${row[column]}`));
    expect(seen.sort()).toEqual(wanted.sort());
  });

  it('names the role a refused route needs, and what the caller has', async () => {
    const h = await harness({ auth: { kind: 'tokens', tokens: TOKENS } });
    const res = await h.request('POST', '/runs/run-none/cancel', {
      headers: { authorization: `Bearer ${TOKENS[0]?.token}` },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      error: {
        code: 'E_FORBIDDEN',
        message: 'this needs the operator role (or admin); viewer has viewer',
        details: { need: 'operator', roles: ['viewer'] },
      },
    });
  });

  it('refuses before anything is read or changed: a refused cancel cancels nothing', async () => {
    const h = await harness({ auth: { kind: 'tokens', tokens: TOKENS } });
    const res = await h.request('POST', '/runs/run-none/cancel', {
      headers: { authorization: `Bearer ${TOKENS[2]?.token}` },
    });
    // 403, not 404: the role is checked before the run is looked for.
    expect(res.status).toBe(403);
  });
});
