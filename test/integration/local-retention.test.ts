/**
 * Retention in the embedded runtime, end to end: a run finishes, and once its retention has passed (a short one
 * here, and a sweep as of a later time: the runtime's clock is not waited on), nothing of it answers any more.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';

/** One day, the shortest a deployment would choose; the sweep is asked as of two days on. */
const stack = useTestStack(() => ({ settings: settingsFromEnv({ CAIRN_RETENTION_DAYS: '1' }) }));
const DAY_MS = 24 * 3600 * 1000;

describe('retention in the embedded runtime', () => {
  it('keeps a finished run through its retention, then sweeps all of it, and lists it no more', async () => {
    const runId = await stack.startRun({
      plan: plan('retention', [step(stack, 'A', T.echo, { input: { value: 'kept, then gone' } })]),
    });
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    await stack.settled();

    await stack.sweepRetention(new Date(Date.now() + DAY_MS / 2));
    expect((await stack.request('GET', `/runs/${runId}`)).status).toBe(200);

    const swept = await stack.sweepRetention(new Date(Date.now() + 2 * DAY_MS));
    expect(swept.runs).toBeGreaterThanOrEqual(1);
    expect((await stack.request('GET', `/runs/${runId}`)).status).toBe(404);
    expect((await stack.request('GET', `/runs/${runId}/events`)).status).toBe(404);
    expect(await stack.store.listSteps(runId)).toEqual([]);
    const listed = (await stack.request('GET', '/runs?status=complete')).json as { runs: { runId: string }[] };
    expect(listed.runs.map((run) => run.runId)).not.toContain(runId);
  });
});
