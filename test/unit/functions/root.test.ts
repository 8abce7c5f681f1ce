/**
 * The Lambdas' root: importing any entry reads no environment (the embedded runtime and the tests import them), the
 * environment is read on the first invocation, and the entries of one container share one root.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const FUNCTIONS = fileURLToPath(new URL('../../../functions/', import.meta.url));
const ENTRIES = readdirSync(FUNCTIONS)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.slice(0, -'.ts'.length));

const ENV = {
  CAIRN_TABLE_NAME: 'cairn',
  CAIRN_RUN_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:run',
  CAIRN_STEP_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:step',
  CAIRN_EVENT_BUS_NAME: 'cairn-bus',
};

/** Swaps process.env for a copy that records every CAIRN_* name read (and every listing of the names). */
function watchEnvironment(values: Record<string, string> = {}) {
  const original = process.env;
  const reads: string[] = [];
  process.env = new Proxy(
    { ...original, ...values },
    {
      get(target, name, receiver) {
        if (typeof name === 'string' && name.startsWith('CAIRN_')) reads.push(name);
        return Reflect.get(target, name, receiver);
      },
      has(target, name) {
        if (typeof name === 'string' && name.startsWith('CAIRN_')) reads.push(name);
        return Reflect.has(target, name);
      },
      ownKeys(target) {
        reads.push('(every name)');
        return Reflect.ownKeys(target);
      },
    },
  );
  return { reads, restore: () => (process.env = original) };
}

let restore: (() => unknown) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  vi.resetModules();
});

describe('the Lambda entries', () => {
  it('are all looked at', () => {
    expect(ENTRIES).toEqual(expect.arrayContaining(['api', 'coordinator', 'step-executor', 'validator', 'root']));
  });

  it.each(ENTRIES)('functions/%s.ts reads no environment when imported', async (entry) => {
    const watched = watchEnvironment(ENV);
    restore = watched.restore;
    vi.resetModules();

    const module = (await import(`../../../functions/${entry}.ts`)) as Record<string, unknown>;

    expect(watched.reads).toEqual([]);
    if (entry !== 'root' && entry !== 'observability') expect(typeof module.handler).toBe('function');
  });

  it('reads the environment on the first invocation, and fails it naming a missing variable', async () => {
    const watched = watchEnvironment();
    restore = watched.restore;
    vi.resetModules();
    const { handler } = await import('../../../functions/validator.ts');
    expect(watched.reads).toEqual([]);

    await expect(handler({ runId: 'r1' }, {})).rejects.toThrow('CAIRN_TABLE_NAME is not set');

    expect(watched.reads).toContain('CAIRN_TABLE_NAME');
    expect(watched.reads).toContain('CAIRN_MAX_STEPS');
  });
});

describe('lambdaRoot', () => {
  it('gives the entries of one container one root: one store for every service', async () => {
    const { lambdaRoot } = await import('../../../functions/root.ts');
    const api = await import('../../../functions/api.ts');
    const planner = await import('../../../functions/planner.ts');
    const validator = await import('../../../functions/validator.ts');
    const env = { ...ENV };

    const root = lambdaRoot(env);
    expect(lambdaRoot(env)).toBe(root);
    expect(lambdaRoot({ ...ENV })).not.toBe(root);
    expect(api.defaultDeps(env).store).toBe(root.store);
    expect(planner.defaultDeps(env).store).toBe(root.store);
    expect(validator.defaultDeps(env).store).toBe(root.store);
    expect(root.coordinatorDeps.store).toBe(root.store);
    expect(root.runnerDeps.store).toBe(root.store);
  });

  it('fails naming a bad variable, before any adapter is made', async () => {
    const { lambdaRoot } = await import('../../../functions/root.ts');
    expect(() => lambdaRoot({ ...ENV, CAIRN_TRACE_RETENTION: 'some' })).toThrow(/^CAIRN_TRACE_RETENTION must be/);
  });
});
