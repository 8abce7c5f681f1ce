/**
 * The API's plan routes ask their PlanRequestChecks for the heavy part of a request, whichever runs it: a refusal
 * from an overloaded pool is the client's coded 503 with Retry-After, and nothing is stored or started.
 */
import { describe, expect, it } from 'vitest';
import {
  inlinePlanRequestChecks,
  type PlanRequestChecks,
  type PlanRequestContext,
  type PlanRequestJob,
} from '../../../shared/api/plan-requests.ts';
import { echoStep, harness, planOf } from './harness.ts';

const overloaded: PlanRequestChecks = {
  run: async () => ({
    ok: false,
    refused: { status: 503, code: 'E_OVERLOADED', message: 'busy', retryAfterSeconds: 1 },
  }),
};

describe('plan routes with PlanRequestChecks', () => {
  it.each([
    ['/plans/validate', { plan: planOf([echoStep('a')]) }],
    ['/runs', { plan: planOf([echoStep('a')]) }],
  ])('answer POST %s with 503 E_OVERLOADED and Retry-After when the checks have no room', async (path, body) => {
    const h = await harness({ planChecks: overloaded });
    const res = await h.request('POST', path, { body });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({ error: { code: 'E_OVERLOADED', message: 'busy' } });
    expect(h.executions.starts).toEqual([]);
    expect(await h.storedKeys()).toEqual([]);
  });

  it('hands the checks the body bytes and asks for the hash only with an Idempotency-Key', async () => {
    const jobs: PlanRequestJob[] = [];
    let deps: PlanRequestContext | undefined;
    const recording: PlanRequestChecks = {
      run: async (job) => {
        jobs.push(job);
        return inlinePlanRequestChecks(deps as PlanRequestContext).run(job);
      },
    };
    const r = await harness({ planChecks: recording });
    deps = r.deps;
    const body = { plan: planOf([echoStep('a')]) };
    expect((await r.request('POST', '/runs', { body })).status).toBe(202);
    expect((await r.request('POST', '/runs', { body, headers: { 'idempotency-key': 'k' } })).status).toBe(202);
    expect(jobs.map((job) => (job.kind === 'submit' ? job.hash : job.kind))).toEqual([false, true]);
    expect(JSON.parse(new TextDecoder().decode(jobs[0]?.bytes))).toEqual(body);
  });
});
