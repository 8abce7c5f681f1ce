/**
 * GET /runs/{id} reads what its page shows: the records of the page's steps, never a list of every step, and a page
 * stays within MAX_PAGE_BYTES whatever its steps hold.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import { MAX_PAGE_BYTES, readRunPage } from '../../../shared/api/run-page.ts';
import { MAX_INLINE_OUTPUT_BYTES } from '../../../shared/api/run-view.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { echoStep, type Harness, harness, planOf, runRecord, seedRun, stepRecord, TOKEN } from './harness.ts';

/** The store behind a log of calls: each method's name and its arguments. */
function logged(store: Store): { store: Store; calls: { name: string; args: unknown[] }[] } {
  const calls: { name: string; args: unknown[] }[] = [];
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push({ name: String(property), args });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, calls };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${String(i).padStart(4, '0')}`);

async function seedSteps(h: Harness, runId: string, n: number, status: 'running' | 'complete', output?: unknown) {
  const steps = ids(n);
  await seedRun(
    h,
    runId,
    planOf(steps.map((id) => echoStep(id))),
    steps.map((id) => stepRecord(runId, id, { status: 'succeeded', ...(output === undefined ? {} : { output }) })),
    { status },
  );
  return steps;
}

describe('GET /runs/{id} reads', () => {
  it('reads only the records of the first page of a finished run, and no list of its steps', async () => {
    const h = await harness({ limits: { maxSteps: 500, maxDepth: 4 } });
    await seedSteps(h, 'big', 300, 'complete');
    const { store, calls } = logged(h.store);
    const response = await createApp({ ...h.deps, store }).request('/runs/big?limit=40', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = (await response.json()) as { steps: { id: string }[]; nextCursor?: string };
    expect(body.steps.map((s) => s.id)).toEqual(ids(40));
    expect(body.nextCursor).toBeTypeOf('string');
    const names = calls.map((c) => c.name);
    expect(names).not.toContain('listSteps');
    expect(names).not.toContain('listStepStatuses');
    const read = calls.filter((c) => c.name === 'getSteps').flatMap((c) => c.args[1] as string[]);
    expect(read).toEqual(ids(40));
  });

  it("derives a running run's status from the steps its last decision counted, reading no step", async () => {
    const h = await harness();
    await seedRun(h, 'wait', planOf([echoStep('a'), echoStep('b')]), [
      stepRecord('wait', 'a', { status: 'succeeded' }),
      stepRecord('wait', 'b', { status: 'awaiting_approval' }),
    ]);
    const { store, calls } = logged(h.store);
    const page = await readRunPage(store, runRecord('wait'), { from: 1, limit: 1 });
    expect(page.view.status).toBe('paused');
    expect(page.view.steps.map((s) => s.id)).toEqual(['b']);
    expect(calls.map((c) => c.name)).toContain('getStepCounts');
    expect(calls.map((c) => c.name)).not.toContain('listSteps');
    expect(calls.map((c) => c.name)).not.toContain('listStepStatuses');
  });
});

describe('GET /runs/{id} pages by bytes', () => {
  it('keeps each page within the byte limit and gives every step once across the pages', async () => {
    const h = await harness({ limits: { maxSteps: 500, maxDepth: 4 } });
    // Each output just under the inline limit: 100 of them would make a page of about 1.6 MB.
    const output = { value: 'x'.repeat(MAX_INLINE_OUTPUT_BYTES - 100) };
    const steps = await seedSteps(h, 'wide', 100, 'complete', output);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const response = await h.request('GET', `/runs/wide${cursor === undefined ? '' : `?cursor=${cursor}`}`);
      const text = await response.text();
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
      const body = JSON.parse(text) as { steps: { id: string; output: unknown }[]; nextCursor?: string };
      expect(body.steps.length).toBeGreaterThan(0);
      expect(body.steps.every((s) => s.output !== null)).toBe(true);
      seen.push(...body.steps.map((s) => s.id));
      if (body.nextCursor === undefined) break;
      cursor = body.nextCursor;
    }
    expect(seen).toEqual(steps);
    expect(cursor).toBeDefined();
  });

  it('shows a step larger than a small byte limit alone on its page rather than none', async () => {
    const h = await harness();
    await seedSteps(h, 'tiny', 3, 'complete', { value: 'y'.repeat(2000) });
    const page = await readRunPage(h.store, runRecord('tiny', { status: 'complete' }), {
      from: 0,
      limit: 10,
      maxBytes: 1500,
    });
    expect(page.view.steps).toHaveLength(1);
    expect(page.next).toBe(1);
  });
});
