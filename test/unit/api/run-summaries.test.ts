import { describe, expect, it } from 'vitest';
import { progressOf } from '../../../shared/api/run-view.ts';
import { echoStep, gateStep, harness, planOf, runRecord, seedRun, stepRecord } from './harness.ts';

interface Summary {
  runId: string;
  progress: { done: number; total: number };
  usage: { tokens: number; costUsd: number };
  awaitingApproval: number;
}
type Page = { runs: Summary[]; nextCursor?: string };

describe('progressOf', () => {
  it('counts only succeeded and skipped steps as done when a run ended early', () => {
    const statuses = [
      ...Array(3).fill('succeeded'),
      'skipped',
      'failed',
      'blocked',
      ...Array(6).fill('cancelled'),
      'superseded',
    ] as const;
    expect(progressOf(statuses)).toEqual({ done: 4, total: 12 });
  });
});

describe('GET /runs summaries', () => {
  it('says what a run spent and how many steps wait for a person', async () => {
    const h = await harness();
    await seedRun(h, 'g', planOf([echoStep('a'), gateStep('b')]), [
      stepRecord('g', 'a', { status: 'succeeded' }),
      stepRecord('g', 'b', { status: 'awaiting_approval' }),
    ]);
    await h.store.updateRun('g', ['running'], { usageTokens: 120, usageCostUsd: 0.5 });
    const page = (await (await h.request('GET', '/runs')).json()) as Page;
    expect(page.runs[0]).toMatchObject({
      runId: 'g',
      usage: { tokens: 120, costUsd: 0.5 },
      awaitingApproval: 1,
      progress: { done: 1, total: 2 },
    });
  });
});

describe('GET /runs?q=', () => {
  const seedMany = async () => {
    const h = await harness();
    for (let i = 0; i < 6; i++) {
      const objective = i % 2 === 0 ? `Migrate billing ${i}` : `Write the report ${i}`;
      await h.store.createRun(
        runRecord(`run-${i}`, { objective, createdAt: `2030-01-0${i + 1}T00:00:00.000Z`, status: 'complete' }),
      );
    }
    return h;
  };

  it('lists only runs whose objective or id contains the text, in any case', async () => {
    const h = await seedMany();
    const ids = async (q: string) =>
      ((await (await h.request('GET', `/runs?q=${encodeURIComponent(q)}`)).json()) as Page).runs.map((r) => r.runId);
    expect(await ids('BILLING')).toEqual(['run-4', 'run-2', 'run-0']);
    expect(await ids('run-3')).toEqual(['run-3']);
    expect(await ids('nothing like it')).toEqual([]);
  });

  it('pages through the matches with nextCursor', async () => {
    const h = await seedMany();
    const first = (await (await h.request('GET', '/runs?q=report&limit=2')).json()) as Page;
    expect(first.runs.map((r) => r.runId)).toEqual(['run-5', 'run-3']);
    const second = (await (await h.request('GET', `/runs?q=report&limit=2&cursor=${first.nextCursor}`)).json()) as Page;
    expect(second.runs.map((r) => r.runId)).toEqual(['run-1']);
    expect(second.nextCursor).toBeUndefined();
  });
});
