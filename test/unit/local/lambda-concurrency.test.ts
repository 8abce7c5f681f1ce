import { describe, expect, it } from 'vitest';
import { limitConcurrency } from '../../../infra/local/lambda-concurrency.ts';

describe('limitConcurrency', () => {
  it('runs up to the limit at once and throttles one more with Lambda.TooManyRequestsException', async () => {
    const releases: (() => void)[] = [];
    const limit = limitConcurrency(
      'StepExecutor',
      2,
      (payload) => new Promise((resolve) => releases.push(() => resolve(payload))),
    );

    const first = limit.invoke('a');
    const second = limit.invoke('b');
    const third = await limit.invoke('c').catch((error: unknown) => error);

    expect(third).toMatchObject({ name: 'Lambda.TooManyRequestsException' });
    expect(limit.inFlight()).toBe(2);
    expect(limit.throttled()).toBe(1);
    for (const release of releases) release();
    await expect(Promise.all([first, second])).resolves.toEqual(['a', 'b']);
    expect(limit.inFlight()).toBe(0);
    const fourth = limit.invoke('d');
    releases.at(-1)?.();
    await expect(fourth).resolves.toBe('d');
  });

  it('frees a slot when an invocation fails', async () => {
    const limit = limitConcurrency('Coordinator', 1, async () => {
      throw new Error('boom');
    });
    await expect(limit.invoke(1)).rejects.toThrow('boom');
    expect(limit.inFlight()).toBe(0);
    await expect(limit.invoke(2)).rejects.toThrow('boom');
    expect(limit.throttled()).toBe(0);
  });

  it('refuses a limit below 1', () => {
    expect(() => limitConcurrency('Api', 0, async () => null)).toThrow('1 or more');
  });
});
