import { describe, expect, it, vi } from 'vitest';
import { runPlanJob } from '../../../shared/services/plan-jobs.ts';
import { echoStep, harness, planOf } from './harness.ts';

describe('POST /plans', () => {
  it('returns the planned plan and starts nothing', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', {
      body: { objective: 'say hi', mode: 'DIRECT', directTarget: 'tool:echo' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { plan: { objective: string; steps: { target: string }[] } };
    expect(body.plan.objective).toBe('say hi');
    expect(body.plan.steps.map((s) => s.target)).toEqual(['tool:echo']);
    expect(h.executions.starts).toEqual([]);
    expect(await h.storedKeys()).toEqual([]);
  });

  it('defaults the mode to DIRECT when a direct target is given', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', { body: { objective: 'say hi', directTarget: 'tool:echo' } });
    expect(res.status).toBe(200);
  });

  it('maps a DIRECT planner error to 422 with the planner code', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', { body: { objective: 'x', directTarget: 'tool:nope' } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: { code: 'E_UNKNOWN_TARGET', message: expect.any(String) } });
  });

  it('answers a DECOMPOSE request with 202 and a pending job before the planner is asked', async () => {
    let asked = 0;
    const h = await harness({
      planner: {
        plan: async (request) => {
          asked++;
          return planOf([echoStep('only')], request.objective);
        },
      },
    });

    const res = await h.request('POST', '/plans', { body: { objective: 'write a report', mode: 'DECOMPOSE' } });

    expect(res.status).toBe(202);
    const job = (await res.json()) as { jobId: string; status: string; kind: string };
    expect(job).toMatchObject({ kind: 'plan', status: 'pending' });
    expect(res.headers.get('location')).toBe(`/plans/${job.jobId}`);
    expect(asked).toBe(0);
    await h.jobsIdle();
    const polled = await h.request('GET', `/plans/${job.jobId}`);
    expect(polled.status).toBe(200);
    expect(await polled.json()).toMatchObject({
      jobId: job.jobId,
      status: 'succeeded',
      plan: { objective: 'write a report', steps: [{ id: 'only' }] },
    });
    expect(asked).toBe(1);
    expect(h.executions.starts).toEqual([]);
  });

  it('runs a job once however often its worker is invoked (Lambda retries an async invocation)', async () => {
    let asked = 0;
    const planner = {
      plan: async (request: { objective: string }) => {
        asked++;
        return planOf([echoStep('only')], request.objective);
      },
    };
    const h = await harness({ planner });
    const res = await h.request('POST', '/plans', { body: { objective: 'write a report' } });
    const { jobId } = (await res.json()) as { jobId: string };
    await h.jobsIdle();

    const again = await runPlanJob({ store: h.store, clock: () => h.now, planner }, jobId);

    expect(again).toMatchObject({ jobId, status: 'succeeded' });
    expect(asked).toBe(1);
  });

  it('fails the job with the planner code when no plan is possible', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', { body: { objective: 'write a report' } });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    await h.jobsIdle();
    expect(await (await h.request('GET', `/plans/${jobId}`)).json()).toMatchObject({
      status: 'failed',
      error: { code: 'E_NO_METHOD', retryable: false },
    });
  });

  it('reports a job no worker answered as failed and retryable, and an unknown job as 404', async () => {
    const h = await harness({
      planJobs: undefined,
    });
    expect((await h.request('POST', '/plans', { body: { objective: 'write a report' } })).status).toBe(503);
    const lost = await harness({ planner: { plan: () => new Promise(() => {}) } });
    const res = await lost.request('POST', '/plans', { body: { objective: 'write a report' } });
    const { jobId } = (await res.json()) as { jobId: string };
    lost.now = new Date(lost.now.getTime() + 4 * 3600_000);
    expect(await (await lost.request('GET', `/plans/${jobId}`)).json()).toMatchObject({
      status: 'failed',
      error: { code: 'E_PLAN_JOB_LOST', retryable: true },
    });
    expect((await lost.request('GET', '/plans/nope')).status).toBe(404);
  });

  it('rejects a bad body with 400 and details', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', { body: { objective: '  ', mode: 'SIDEWAYS', extra: 1 } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe('E_BAD_REQUEST');
    expect(body.error.details.length).toBeGreaterThanOrEqual(2);
  });

  it('rejects malformed JSON and duplicate keys with 400', async () => {
    const h = await harness();
    for (const body of ['{"objective":', '{"objective":"a","objective":"b"}', '']) {
      const res = await h.request('POST', '/plans', { body, headers: { 'content-type': 'application/json' } });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_BAD_REQUEST');
    }
  });

  it('hides unexpected errors behind a generic 500 and logs them on the server', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const h = await harness({
      planner: {
        plan: async () => {
          throw new Error('secret internals at /srv/x.ts:12');
        },
      },
    });
    const res = await h.request('POST', '/plans', { body: { objective: 'x', directTarget: 'tool:echo' } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'E_INTERNAL', message: 'internal error' } });
    expect(text).not.toContain('secret');
    expect(log).toHaveBeenCalledOnce();
    log.mockRestore();
  });
});

describe('POST /plans/validate', () => {
  it('answers 200 valid for a good plan', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans/validate', { body: { plan: planOf([echoStep('a')]) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: true });
  });

  it('answers 422 with every issue for a bad plan', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a', { dependsOn: ['b'] }), echoStep('a', { target: 'tool:nope' })]);
    const res = await h.request('POST', '/plans/validate', { body: { plan } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { valid: boolean; errors: { code: string }[]; error: { code: string } };
    expect(body.valid).toBe(false);
    expect(body.error.code).toBe('E_INVALID_PLAN');
    expect(body.errors.map((e) => e.code)).toEqual(
      expect.arrayContaining(['E_UNKNOWN_DEPENDENCY', 'E_DUPLICATE_ID', 'E_UNKNOWN_TARGET']),
    );
  });

  it('applies the untrusted rules only when generated is true', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a', { status: 'succeeded' })]);
    const trusted = await h.request('POST', '/plans/validate', { body: { plan } });
    const untrusted = await h.request('POST', '/plans/validate', { body: { plan, generated: true } });
    expect(trusted.status).toBe(200);
    expect(untrusted.status).toBe(422);
    expect(((await untrusted.json()) as { errors: { code: string }[] }).errors.map((e) => e.code)).toContain(
      'E_NOT_PENDING',
    );
  });

  it('applies the configured limits', async () => {
    const h = await harness({ limits: { maxSteps: 1, maxDepth: 4 } });
    const res = await h.request('POST', '/plans/validate', { body: { plan: planOf([echoStep('a'), echoStep('b')]) } });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: { code: string }[] }).errors.map((e) => e.code)).toContain(
      'E_TOO_MANY_STEPS',
    );
  });

  it('refuses a plan over the step limit for its size alone, without checking its steps one by one', async () => {
    const h = await harness({ limits: { maxSteps: 2, maxDepth: 4 } });
    const steps = [echoStep('a'), echoStep('b', { target: 'tool:nope' }), echoStep('c', { dependsOn: ['zz'] })];

    for (const path of ['/plans/validate', '/runs']) {
      const res = await h.request('POST', path, { body: { plan: planOf(steps) } });
      expect(res.status, path).toBe(422);
      const body = (await res.json()) as { error: { code: string }; errors: { code: string; path: string }[] };
      expect(body.error.code).toBe('E_INVALID_PLAN');
      expect(body.errors.map((e) => [e.code, e.path])).toEqual([['E_TOO_MANY_STEPS', '/steps']]);
    }
    expect(await h.storedKeys()).toEqual([]);
  });

  it('answers 422 with 100 issues and "and N more" for a step with 150,000 duplicate dependencies', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a'), echoStep('b', { dependsOn: Array.from({ length: 150_000 }, () => 'a') })]);

    for (const path of ['/plans/validate', '/runs']) {
      const res = await h.request('POST', path, { body: { plan } });
      expect(res.status, path).toBe(422);
      const body = (await res.json()) as { error: { code: string; message: string }; errors: { code: string }[] };
      expect(body.error).toEqual({ code: 'E_INVALID_PLAN', message: 'the plan is invalid (149999 issues)' });
      expect(body.errors).toHaveLength(101);
      expect(body.errors.at(-1)).toEqual({ code: 'E_MORE_ISSUES', path: '', message: 'and 149899 more' });
    }
    expect(await h.storedKeys()).toEqual([]);
  });

  it('needs a plan field', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans/validate', { body: { generated: true } });
    expect(res.status).toBe(400);
  });
});
