/**
 * Ids in paths are checked once, before any store call (shared/api/path-ids.ts): an id cairn could never have made
 * (too long, or outside the id alphabet) is a 404 E_NOT_FOUND on every route that takes one, never a store error's
 * 500 with a stack trace in the log.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import type { ApiDeps } from '../../../shared/api/deps.ts';
import { ID_PARAMS, MAX_PATH_ID_LENGTH } from '../../../shared/api/path-ids.ts';
import { catalog, echoStep, harness, planOf, SETTINGS, seedRun, stepRecord, TOKEN } from './harness.ts';

/** Every call reaches this: a store (or any other dependency) that fails the test's request if it is asked. */
const untouchable = <T extends object>(what: string): T =>
  new Proxy({} as T, {
    get: (_, key) => () => {
      throw new Error(`${what}.${String(key)} was called`);
    },
  });

const refuse = (what: string) => async () => {
  throw new Error(`${what} was called`);
};

/** The app with dependencies that all throw: any request that gets past the guard answers 500. */
function guardedApp() {
  const deps: ApiDeps = {
    store: untouchable('store'),
    executions: untouchable('executions'),
    catalog,
    planner: { plan: refuse('planner') },
    limits: { maxSteps: 8, maxDepth: 4 },
    mailbox: untouchable('mailbox'),
    runSettings: SETTINGS,
    auth: { kind: 'token', token: TOKEN },
    clock: () => new Date('2030-01-01T00:00:00.000Z'),
    newId: () => 'new-id',
    planJobs: untouchable<NonNullable<ApiDeps['planJobs']>>('planJobs'),
  };
  return createApp(deps);
}

/** Parameters that are not ids, with a value their route takes. */
const OTHER_PARAMS: Readonly<Record<string, string>> = { revision: '1', source: 'prices' };

const HOSTILE = [
  ['one character over the bound', 'a'.repeat(MAX_PATH_ID_LENGTH + 1)],
  ['past DynamoDB key limit', 'r'.repeat(2100)],
  ['a key separator', 'run#1'],
  ['a space', 'run 1'],
  ['a non-ASCII letter', 'rün'],
] as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('ids in paths', () => {
  const app = guardedApp();
  const routes = app.routes.filter((r) => r.method !== 'ALL' && r.path.includes('/:'));
  const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);

  it('knows every parameter of every route as an id or as something else', () => {
    const names = new Set(routes.flatMap((r) => paramsOf(r.path)));
    expect([...names].filter((n) => !(n in ID_PARAMS) && !(n in OTHER_PARAMS))).toEqual([]);
    expect(routes.length).toBeGreaterThan(10);
  });

  const cases = routes
    .filter((r) => !r.path.startsWith('/webhooks/'))
    .flatMap((r) =>
      paramsOf(r.path)
        .filter((name) => name in ID_PARAMS)
        .flatMap((name) => HOSTILE.map(([what, value]) => ({ route: `${r.method} ${r.path}`, name, what, value }))),
    );

  it.each(cases)('$route: a $name with $what is 404 E_NOT_FOUND, before any store call', async (c) => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const [method, pattern] = c.route.split(' ') as [string, string];
    const path = pattern.replace(/:(\w+)/g, (_, name: string) =>
      encodeURIComponent(name === c.name ? c.value : (OTHER_PARAMS[name] ?? 'a1')),
    );

    const response = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });

    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('E_NOT_FOUND');
    expect(body.error.message.length).toBeLessThan(200);
    expect(log).not.toHaveBeenCalled();
  });

  it('answers the store`s own 404 for an id at the bound, and the guard`s past it, on a real store', async () => {
    const h = await harness();
    await seedRun(h, 'run-a', planOf([echoStep('only')]), [stepRecord('run-a', 'only')]);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const atBound = 'a'.repeat(MAX_PATH_ID_LENGTH);

    const answers = await Promise.all(
      [
        `/runs/${atBound}`,
        `/runs/${'r'.repeat(2100)}`,
        `/runs/${'r'.repeat(2100)}/events`,
        `/runs/run-a/steps/${'s'.repeat(2100)}`,
        `/approvals/${'p'.repeat(2100)}`,
        `/plans/${'j'.repeat(2100)}`,
      ].map(async (path) => {
        const response = await h.request('GET', path);
        return [response.status, ((await response.json()) as { error: { code: string } }).error.code];
      }),
    );

    expect(answers).toEqual(Array.from({ length: 6 }, () => [404, 'E_NOT_FOUND']));
    expect(log).not.toHaveBeenCalled();
  });
});
