import { afterEach, describe, expect, it, vi } from 'vitest';
import { TIMED_OUT_STATUS, withApiTimeout } from '../../../../infra/local/quotas/api-timeout.ts';
import { resolveQuotas } from '../../../../infra/local/quotas/aws-quotas.ts';
import { watchThrottles } from '../../../../infra/local/quotas/quota-flags.ts';
import { createThrottleCounter } from '../../../../infra/local/quotas/throttle-counter.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('withApiTimeout', () => {
  it("answers a request the API has not answered in time with the gateway's bare 500, and counts it", async () => {
    vi.useFakeTimers();
    const counter = createThrottleCounter();
    const api = withApiTimeout(() => new Promise<Response>(() => {}), 29_000, counter);
    const answer = api(new Request('http://localhost/runs'));
    await vi.advanceTimersByTimeAsync(29_000);
    const response = await answer;
    expect(response.status).toBe(TIMED_OUT_STATUS);
    expect(await response.json()).toEqual({ message: 'Internal Server Error' });
    expect(counter.counts()).toEqual({ 'api.timeout': 1 });
  });

  it('passes an answer given in time through as it is', async () => {
    const counter = createThrottleCounter();
    const api = withApiTimeout(async () => new Response('ok', { status: 202 }), 29_000, counter);
    const response = await api(new Request('http://localhost/runs'));
    expect(response.status).toBe(202);
    expect(counter.counts()).toEqual({});
  });
});

describe('watchThrottles', () => {
  it('logs the quotas, the throttles while they change, and their totals at the end', async () => {
    vi.useFakeTimers();
    const counter = createThrottleCounter();
    const lines: string[] = [];
    const stack = { quotas: resolveQuotas({ lambdaConcurrency: 8 }), stats: () => ({ throttles: counter.counts() }) };
    const watch = watchThrottles(stack, (line) => lines.push(line), { quiet: false, everyMs: 1000 });
    counter.count('lambda.concurrency');
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(1000);
    counter.count('sfn.start');
    watch.stop();
    expect(lines[0]).toContain('Lambda concurrency 8');
    expect(lines.filter((line) => line.includes('so far'))).toEqual([
      'cairn: throttles absorbed so far: lambda.concurrency 1',
    ]);
    expect(lines.at(-1)).toBe('cairn: throttles absorbed: lambda.concurrency 1, sfn.start 1');
  });

  it('says nothing for a stack without quotas', () => {
    const lines: string[] = [];
    watchThrottles({ stats: () => ({ throttles: {} }) }, (line) => lines.push(line), { quiet: false }).stop();
    expect(lines).toEqual([]);
  });
});
