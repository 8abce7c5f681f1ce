/**
 * Every list of the API pages: runs, approvals, a run's events and a run's steps answer `nextCursor` while more may
 * follow, and a run view never grows with what its steps returned.
 */
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../../shared/api/cursor.ts';
import { MAX_INLINE_OUTPUT_BYTES, MAX_INLINE_TRACE } from '../../../shared/api/run-view.ts';
import type { TraceEntry } from '../../../shared/ports/store.ts';
import { approvalRecord, echoStep, type Harness, harness, planOf, runRecord, seedRun, stepRecord } from './harness.ts';

const at = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString();

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** Follows `nextCursor` from the first page to the last, and returns every page's ids. */
async function allPages(
  h: Harness,
  path: string,
  ids: (body: Record<string, unknown>) => string[],
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 20; n++) {
    const separator = path.includes('?') ? '&' : '?';
    const response = await h.request('GET', cursor === undefined ? path : `${path}${separator}cursor=${cursor}`);
    expect(response.status).toBe(200);
    const body = await json<Record<string, unknown>>(response);
    pages.push(ids(body));
    if (typeof body.nextCursor !== 'string') return pages;
    cursor = body.nextCursor;
  }
  throw new Error(`${path} never stopped giving cursors`);
}

describe('GET /runs', () => {
  it('pages runs newest first until no cursor is left when there are more than the limit', async () => {
    const h = await harness();
    for (let i = 0; i < 7; i++) await h.store.createRun(runRecord(`run-${i}`, { createdAt: at(i), revision: 0 }));
    const pages = await allPages(h, '/runs?limit=3', (b) => (b.runs as { runId: string }[]).map((r) => r.runId));
    expect(pages.flat()).toEqual(['run-6', 'run-5', 'run-4', 'run-3', 'run-2', 'run-1', 'run-0']);
    expect(pages[0]).toHaveLength(3);
  });

  it('pages runs of one status across both stored states when asked for running runs', async () => {
    const h = await harness();
    for (let i = 0; i < 6; i++) {
      const status = i % 3 === 0 ? 'complete' : 'running';
      await h.store.createRun(runRecord(`run-${i}`, { createdAt: at(i), revision: 0, status }));
    }
    const pages = await allPages(h, '/runs?status=running&limit=2', (b) =>
      (b.runs as { runId: string }[]).map((r) => r.runId),
    );
    expect(pages.flat()).toEqual(['run-5', 'run-4', 'run-2', 'run-1']);
  });

  it('answers 400 E_BAD_CURSOR when the cursor is forged or belongs to another list', async () => {
    const h = await harness();
    const forged = await h.request('GET', '/runs?cursor=not%20base64!');
    expect(forged.status).toBe(400);
    expect((await json<{ error: { code: string } }>(forged)).error.code).toBe('E_BAD_CURSOR');
    const foreign = encodeCursor('approvals', { createdAt: at(1), approvalId: 'x' });
    const other = await h.request('GET', `/runs?cursor=${foreign}`);
    expect(other.status).toBe(400);
    expect((await json<{ error: { code: string } }>(other)).error.code).toBe('E_BAD_CURSOR');
    const json5 = Buffer.from('{"l":"runs","p":{"createdAt":"x","runId":"y"}}').toString('base64url');
    expect((await h.request('GET', `/runs?cursor=${json5}`)).status).toBe(400);
  });
});

describe('GET /approvals', () => {
  it('pages approvals oldest first until no cursor is left when the queue is longer than the limit', async () => {
    const h = await harness();
    for (let i = 0; i < 5; i++) {
      await h.store.putApproval(approvalRecord(`ap-${i}`, { createdAt: at(10 - i), stepId: `gate-${i}` }));
    }
    const pages = await allPages(h, '/approvals?status=pending&limit=2', (b) =>
      (b.approvals as { approvalId: string }[]).map((a) => a.approvalId),
    );
    expect(pages.flat()).toEqual(['ap-4', 'ap-3', 'ap-2', 'ap-1', 'ap-0']);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
  });
});

describe('GET /runs/{id}/events', () => {
  it('pages a run’s events by limit, with the last seq as the cursor', async () => {
    const h = await harness();
    await seedRun(h, 'run-e', planOf([echoStep('a')]), [stepRecord('run-e', 'a')]);
    await h.store.recordEvents([
      {
        id: 'w1',
        runId: 'run-e',
        at: at(1),
        events: (['StepStarted', 'StepSucceeded', 'RunFinished'] as const).map((type) => ({ type, detail: {} })),
      },
    ]);
    const pages = await allPages(h, '/runs/run-e/events?limit=2', (b) =>
      (b.events as { type: string }[]).map((e) => e.type),
    );
    expect(pages.flat()).toEqual(['StepStarted', 'StepSucceeded', 'RunFinished']);
  });
});

describe('GET /runs/{id}', () => {
  it('pages a run’s steps in plan order when there are more than the limit', async () => {
    const h = await harness({ limits: { maxSteps: 20, maxDepth: 4 } });
    const ids = Array.from({ length: 7 }, (_, i) => `s${i}`);
    await seedRun(
      h,
      'run-s',
      planOf(ids.map((id) => echoStep(id))),
      ids.map((id) => stepRecord('run-s', id)),
    );
    const pages = await allPages(h, '/runs/run-s?limit=3', (b) => (b.steps as { id: string }[]).map((s) => s.id));
    expect(pages).toEqual([['s0', 's1', 's2'], ['s3', 's4', 's5'], ['s6']]);
  });

  it('leaves out a large output and old trace entries, which the step’s own view keeps', async () => {
    const h = await harness();
    const big = { value: 'x'.repeat(MAX_INLINE_OUTPUT_BYTES + 10) };
    const trace: TraceEntry[] = Array.from({ length: MAX_INLINE_TRACE + 5 }, (_, i) => ({
      at: at(i),
      kind: 'exec',
      text: `entry ${i}`,
    }));
    await seedRun(h, 'run-o', planOf([echoStep('big'), echoStep('small')]), [
      stepRecord('run-o', 'big', { status: 'succeeded', output: big, trace }),
      stepRecord('run-o', 'small', { status: 'succeeded', output: { value: 'ok' } }),
    ]);
    const view = await json<{ steps: Record<string, unknown>[] }>(await h.request('GET', '/runs/run-o'));
    const [bigView = {}, smallView] = view.steps;
    expect(bigView).toMatchObject({ output: null, traceOmitted: 5 });
    expect((bigView.outputOmitted as { bytes: number }).bytes).toBeGreaterThan(MAX_INLINE_OUTPUT_BYTES);
    expect((bigView.trace as TraceEntry[])[0]?.text).toBe('entry 5');
    expect(smallView).toMatchObject({ output: { value: 'ok' } });
    expect(smallView).not.toHaveProperty('outputOmitted');
    const detail = await h.request('GET', '/runs/run-o/steps/big');
    expect(detail.status).toBe(200);
    expect(JSON.stringify(await detail.json())).toContain(big.value);
  });
});
