import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, badRequest, mapError } from '../../../shared/api/errors.ts';
import {
  ConflictError,
  ModelError,
  NotFoundError,
  PayloadTooLargeError,
  PlannerError,
  ValidationError,
} from '../../../shared/errors.ts';
import { harness } from './harness.ts';

describe('mapError', () => {
  it('maps the domain errors to their client statuses', () => {
    const issues = [{ code: 'E_FIELD', path: '/x', message: 'bad' }];
    expect(mapError(new ValidationError('invalid', issues))).toMatchObject({
      status: 422,
      body: { error: { code: 'E_VALIDATION', message: 'invalid', details: issues } },
      unexpected: false,
    });
    expect(mapError(new NotFoundError('gone'))).toMatchObject({
      status: 404,
      body: { error: { code: 'E_NOT_FOUND' } },
    });
    expect(mapError(new ConflictError('lost'))).toMatchObject({ status: 409, body: { error: { code: 'E_CONFLICT' } } });
    expect(mapError(new PayloadTooLargeError('too big to keep'))).toMatchObject({
      status: 413,
      body: { error: { code: 'E_TOO_LARGE' } },
      unexpected: false,
    });
  });

  it('keeps the planner code and issues', () => {
    const issues = [{ code: 'E_CYCLE', path: '/steps', message: 'a -> a' }];
    const mapped = mapError(new PlannerError('model plan invalid', { context: { code: 'E_INVALID_PLAN', issues } }));
    expect(mapped).toMatchObject({ status: 422, body: { error: { code: 'E_INVALID_PLAN', details: issues } } });
    expect(mapError(new PlannerError('x')).body).toMatchObject({ error: { code: 'E_PLANNER' } });
  });

  it('turns provider failures into gateway errors without their message', () => {
    const mapped = mapError(new ModelError('throttled by arn:aws:secret', { retryable: true }));
    expect(mapped.status).toBe(503);
    expect(JSON.stringify(mapped.body)).not.toContain('arn:aws');
    expect(mapError(new ModelError('denied')).status).toBe(502);
  });

  it('answers a throttled or timed-out platform call with a 503 the client may repeat', () => {
    const throttle = Object.assign(new Error('rate exceeded'), {
      name: 'ProvisionedThroughputExceededException',
      $retryable: { throttling: true },
    });
    const timeout = Object.assign(new Error('connection timed out'), { name: 'TimeoutError' });
    const retryableByMetadata = Object.assign(new Error('slow down'), { name: 'SlowDown', $retryable: {} });
    for (const thrown of [throttle, timeout, retryableByMetadata]) {
      expect(mapError(thrown)).toMatchObject({
        status: 503,
        body: { error: { code: 'E_UNAVAILABLE' } },
        unexpected: false,
      });
    }
  });

  it('hides anything unknown behind a generic 500', () => {
    for (const thrown of [new Error('at /srv/a.ts:1'), 'a string', undefined, { name: 'X' }]) {
      expect(mapError(thrown)).toEqual({
        status: 500,
        body: { error: { code: 'E_INTERNAL', message: 'internal error' } },
        unexpected: true,
      });
    }
  });

  it('passes an ApiError through with its extra fields', () => {
    const mapped = mapError(new ApiError(410, 'E_GONE', 'gone', { details: [1], extra: { valid: false } }));
    expect(mapped).toEqual({
      status: 410,
      body: { error: { code: 'E_GONE', message: 'gone', details: [1] }, valid: false },
      unexpected: false,
    });
  });

  it('lists zod issues with JSON Pointer paths', () => {
    const parsed = z.strictObject({ a: z.object({ b: z.number() }) }).safeParse({ a: { b: 'x' } });
    if (parsed.success) throw new Error('expected a failure');
    expect(badRequest(parsed.error).details).toEqual([{ path: '/a/b', message: expect.any(String) }]);
  });
});

describe('the app error envelope', () => {
  it('answers unknown routes with a JSON 404', async () => {
    const h = await harness();
    const res = await h.request('GET', '/nowhere');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_NOT_FOUND');
  });

  it('refuses bodies over the size limit with 413', async () => {
    const h = await harness();
    const res = await h.request('POST', '/plans', { body: { objective: 'x'.repeat(1024 * 1024 + 1) } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_TOO_LARGE');
  });
});
