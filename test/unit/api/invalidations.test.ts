import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../../shared/api/deps.ts';
import { ConflictError, NotFoundError } from '../../../shared/errors.ts';
import { harness, runRecord } from './harness.ts';

type InvalidateRequest = Parameters<NonNullable<ApiDeps['invalidateStep']>>[0];

/** A harness whose invalidateStep records its requests and answers like the invalidator. */
async function withInvalidator(answer: (request: InvalidateRequest) => Promise<{ runId: string; stepIds: string[] }>) {
  const requests: InvalidateRequest[] = [];
  const h = await harness({
    invalidateStep: async (request) => {
      requests.push(request);
      return { ...(await answer(request)), reopened: false };
    },
  });
  return { h, requests };
}

describe('POST /runs/{runId}/steps/{stepId}/invalidate', () => {
  it('answers 202 with the invalidated steps and passes the reason and the idempotency key on', async () => {
    const { h, requests } = await withInvalidator(async (r) => ({ runId: r.runId, stepIds: [r.stepId, 'after'] }));
    await h.store.createRun(runRecord('run-1'));

    const response = await h.request('POST', '/runs/run-1/steps/w/invalidate', {
      body: { reason: 'the repo moved' },
      headers: { 'idempotency-key': 'req-7' },
    });

    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ runId: 'run-1', stepIds: ['w', 'after'], reopened: false });
    expect(requests).toEqual([{ runId: 'run-1', stepId: 'w', reason: 'the repo moved', requestId: 'req-7' }]);
  });

  it('accepts a request without a body', async () => {
    const { h, requests } = await withInvalidator(async (r) => ({ runId: r.runId, stepIds: [r.stepId] }));
    await h.store.createRun(runRecord('run-1'));

    const response = await h.request('POST', '/runs/run-1/steps/w/invalidate');

    expect(response.status).toBe(202);
    expect(requests).toEqual([{ runId: 'run-1', stepId: 'w' }]);
  });

  it('answers 404 for an unknown run without asking the invalidator, and for an unknown step', async () => {
    const { h, requests } = await withInvalidator(async (r) => {
      throw new NotFoundError(`run ${r.runId} has no step ${r.stepId}`);
    });
    await h.store.createRun(runRecord('run-1'));

    expect((await h.request('POST', '/runs/ghost/steps/w/invalidate')).status).toBe(404);
    expect(requests).toEqual([]);
    expect((await h.request('POST', '/runs/run-1/steps/ghost/invalidate')).status).toBe(404);
  });

  it('answers 409 when the invalidator refuses the run, 400 for a bad body or key', async () => {
    const { h } = await withInvalidator(async () => {
      throw new ConflictError('run run-1 is cancelled');
    });
    await h.store.createRun(runRecord('run-1'));

    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: {} })).status).toBe(409);
    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: { reason: ' ' } })).status).toBe(400);
    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: { why: 'x' } })).status).toBe(400);
    const badKey = await h.request('POST', '/runs/run-1/steps/w/invalidate', { headers: { 'idempotency-key': 'a b' } });
    expect(badKey.status).toBe(400);
  });

  it('answers 503 when the deployment has no invalidator', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('run-1'));
    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate')).status).toBe(503);
  });
});
