import { describe, expect, it } from 'vitest';
import { plannerError } from '../../../shared/planner/errors.ts';
import { echoStep, type Harness, harness, planOf, runRecord, seedRun, stepRecord } from './harness.ts';

type ReplanRequest = { runId: string; reason: string; objective?: string };

/** A harness whose replan jobs record their requests and answer as told. */
async function withReplanner(answer: (request: ReplanRequest) => Promise<{ runId: string; revision?: number }>) {
  const requests: ReplanRequest[] = [];
  const h = await harness({
    replanRun: async (request) => {
      requests.push(request);
      return answer(request);
    },
  });
  return { h, requests };
}

/** Asks for a replan, then polls its job once the worker is done. */
async function replan(h: Harness, runId: string, reason: string, objective?: string) {
  const body = objective === undefined ? { reason } : { reason, objective };
  const response = await h.request('POST', `/runs/${runId}/replan`, { body });
  const answer = (await response.json()) as Record<string, unknown>;
  await h.jobsIdle();
  const location = response.headers.get('location');
  const job = location === null ? undefined : await h.request('GET', location);
  return { response, answer, location, job: job && ((await job.json()) as Record<string, unknown>) };
}

describe('POST /runs/{runId}/replan', () => {
  it('answers 202 with a pending job at once, whose outcome is the revision made', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1'));

    const { response, answer, location, job } = await replan(h, 'run-1', 'the provider is down');

    expect(response.status).toBe(202);
    expect(answer).toMatchObject({ kind: 'replan', status: 'pending', runId: 'run-1', jobId: expect.any(String) });
    expect(location).toBe(`/plans/${String(answer.jobId)}`);
    expect(job).toMatchObject({ jobId: answer.jobId, status: 'succeeded', runId: 'run-1', revision: 2 });
    // The job is the request the replanner names to the run's decider (a repeat of it is told the same answer).
    expect(requests).toEqual([
      { runId: 'run-1', reason: 'the provider is down', request: answer.jobId, requestedBy: 'local-token' },
    ]);
  });

  it('ends the job without a revision when a concurrent replan made it', async () => {
    const { h } = await withReplanner(async (r) => ({ runId: r.runId }));
    await h.store.createRun(runRecord('run-1'));

    const { job } = await replan(h, 'run-1', 'again');

    expect(job).toMatchObject({ status: 'succeeded', runId: 'run-1' });
    expect(job).not.toHaveProperty('revision');
  });

  it('answers 409 with the conflict code at once at the replan limit, and makes no job', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1', { replans: 3 }));

    const { response, answer } = await replan(h, 'run-1', 'once more');

    expect(response.status).toBe(409);
    expect(answer).toEqual({
      error: { code: 'E_REPLAN_LIMIT', message: 'run run-1 has reached its replan limit: 3 of 3 replans made' },
    });
    expect(requests).toEqual([]);
    expect((await h.storedKeys()).filter((k) => k.startsWith('PLANJOB#'))).toEqual([]);
  });

  it('fails the job with the planner code when no revision is possible', async () => {
    const { h } = await withReplanner(async () => {
      throw plannerError('E_NO_ALTERNATIVE', 'no alternative for step B');
    });
    await h.store.createRun(runRecord('run-1'));

    const { response, job } = await replan(h, 'run-1', 'try');

    expect(response.status).toBe(202);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code: 'E_NO_ALTERNATIVE', message: 'no alternative for step B', retryable: false },
    });
  });

  it('refuses a blank or missing reason and an unknown run before asking the replanner', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1'));

    expect((await h.request('POST', '/runs/run-1/replan', { body: { reason: '  ' } })).status).toBe(400);
    expect((await h.request('POST', '/runs/run-1/replan', { body: {} })).status).toBe(400);
    expect((await h.request('POST', '/runs/nope/replan', { body: { reason: 'x' } })).status).toBe(404);
    await h.jobsIdle();
    expect(requests).toEqual([]);
  });

  it('hands the reason and a new objective to the replanner', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1', { status: 'complete' }));

    const { response, answer } = await replan(h, 'run-1', 'add the summary', 'research and summarize');

    expect(response.status).toBe(202);
    expect(requests).toEqual([
      {
        runId: 'run-1',
        reason: 'add the summary',
        objective: 'research and summarize',
        request: answer.jobId,
        requestedBy: 'local-token',
      },
    ]);
  });

  it('ends the job with the approval a revision adding a mutating target waits for', async () => {
    const { h } = await withReplanner(async (r) => ({ runId: r.runId, approvalId: 'run-1.revision.r2.1' }));
    await h.store.createRun(runRecord('run-1'));

    const { job } = await replan(h, 'run-1', 'write it down');

    expect(job).toMatchObject({ status: 'succeeded', approvalId: 'run-1.revision.r2.1' });
    expect(job).not.toHaveProperty('revision');
  });

  it('answers 409 E_RUN_CANCELLED for a cancelled run, with no job', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1', { status: 'cancelled' }));

    const { response, answer } = await replan(h, 'run-1', 'again');

    expect(response.status).toBe(409);
    expect(answer).toMatchObject({ error: { code: 'E_RUN_CANCELLED' } });
    await h.jobsIdle();
    expect(requests).toEqual([]);
  });

  it('refuses unknown keys, an over-long reason and a blank or over-long objective with coded 400s', async () => {
    const { h, requests } = await withReplanner(async (r) => ({ runId: r.runId, revision: 2 }));
    await h.store.createRun(runRecord('run-1'));
    const bodies = [
      { reason: 'x', why: 'y' },
      { reason: 'x'.repeat(2001) },
      { reason: 'x', objective: '   ' },
      { reason: 'x', objective: 'o'.repeat(100_000) },
      { reason: 'x', objective: 7 },
    ];

    for (const body of bodies) {
      const response = await h.request('POST', '/runs/run-1/replan', { body });
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toMatch(/^E_/);
    }
    await h.jobsIdle();
    expect(requests).toEqual([]);
  });

  it('answers 503 where replanning is not configured', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('run-1'));

    const response = await h.request('POST', '/runs/run-1/replan', { body: { reason: 'x' } });

    expect(response.status).toBe(503);
  });
});

describe('GET /runs/{runId}/plan/diff', () => {
  async function twoRevisions() {
    const h = await harness();
    const first = planOf([echoStep('A'), echoStep('B', { dependsOn: ['A'] }), echoStep('C', { dependsOn: ['B'] })]);
    await seedRun(h, 'run-1', first, [stepRecord('run-1', 'A'), stepRecord('run-1', 'B'), stepRecord('run-1', 'C')], {
      revision: 2,
    });
    const second = {
      ...first,
      revision: 2,
      steps: [
        echoStep('A'),
        echoStep('B', { dependsOn: ['A'], title: 'B again' }),
        echoStep('D', { dependsOn: ['B'] }),
      ],
    };
    await h.store.putPlanRevision('run-1', second, 'replan: B failed');
    await h.store.transitionStep('run-1', 'C', { generation: 1, from: ['pending'] }, { status: 'superseded' });
    return h;
  }

  it('defaults to the current revision against the one before it', async () => {
    const h = await twoRevisions();

    const response = await h.request('GET', '/runs/run-1/plan/diff');

    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      runId: 'run-1',
      from: 1,
      to: 2,
      reason: 'replan: B failed',
      diff: {
        added: [{ id: 'D' }],
        removed: [],
        changed: [{ id: 'B', fields: ['title'] }],
        superseded: [{ id: 'C' }],
      },
    });
  });

  it('diffs any two revisions, and from 0 shows every step as added', async () => {
    const h = await twoRevisions();

    const back = (await (await h.request('GET', '/runs/run-1/plan/diff?from=2&to=1')).json()) as {
      diff: { added: { id: string }[]; removed: { id: string }[] };
    };
    const fresh = (await (await h.request('GET', '/runs/run-1/plan/diff?from=0&to=1')).json()) as {
      from: number | null;
      diff: { added: { id: string }[] };
    };

    expect(back.diff.added.map((s) => s.id)).toEqual(['C']);
    expect(back.diff.removed.map((s) => s.id)).toEqual(['D']);
    expect(fresh.from).toBeNull();
    expect(fresh.diff.added.map((s) => s.id)).toEqual(['A', 'B', 'C']);
  });

  it('answers 404 for a revision the run does not have and 400 for a bad query', async () => {
    const h = await twoRevisions();

    expect((await h.request('GET', '/runs/run-1/plan/diff?to=7')).status).toBe(404);
    expect((await h.request('GET', '/runs/run-1/plan/diff?from=x')).status).toBe(400);
    expect((await h.request('GET', '/runs/run-1/plan/diff?since=1')).status).toBe(400);
  });
});
