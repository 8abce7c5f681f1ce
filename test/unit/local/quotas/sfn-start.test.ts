import { describe, expect, it } from 'vitest';
import { throttleBackoffMs, withSdkRetries } from '../../../../infra/local/quotas/sdk-retries.ts';
import { startThrottled, withStartQuota } from '../../../../infra/local/quotas/sfn-start.ts';
import { createThrottleCounter } from '../../../../infra/local/quotas/throttle-counter.ts';
import { createTokenBucket } from '../../../../infra/local/quotas/token-bucket.ts';
import { isTransientPlatformError } from '../../../../shared/errors.ts';
import type { Executions } from '../../../../shared/ports/executions.ts';

function executions(): Executions & { started: string[] } {
  const started: string[] = [];
  return {
    started,
    async start(_machine, name) {
      started.push(name);
      return { executionId: name, started: true };
    },
    sendTaskSuccess: async () => {},
    sendTaskFailure: async () => {},
    stop: async () => {},
    stopNamed: async () => {},
  };
}

describe('withSdkRetries', () => {
  it('waits out a throttle with full jitter over a doubling second, as the SDK does', async () => {
    const waits: number[] = [];
    let tries = 0;
    const result = await withSdkRetries(
      async () => {
        tries += 1;
        if (tries < 3) throw startThrottled();
        return 'ok';
      },
      (error) => (error as Error).name === 'ThrottlingException',
      { random: () => 0.5, sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('ok');
    expect(waits).toEqual([500, 1000]);
    expect(throttleBackoffMs(10, 0.999)).toBeLessThanOrEqual(20_000);
  });

  it('surfaces the throttle after the last attempt with the attempts and the delay in its metadata', async () => {
    const failure = withSdkRetries(
      () => Promise.reject(startThrottled()),
      () => true,
      { random: () => 1, sleep: async () => {} },
    );
    await expect(failure).rejects.toMatchObject({
      name: 'ThrottlingException',
      $metadata: { httpStatusCode: 400, attempts: 3, totalRetryDelay: 3000 },
    });
  });

  it('does not retry what is not a throttle', async () => {
    let tries = 0;
    const failure = withSdkRetries(
      async () => {
        tries += 1;
        throw new Error('ValidationException');
      },
      () => false,
    );
    await expect(failure).rejects.toThrow('ValidationException');
    expect(tries).toBe(1);
  });
});

describe('withStartQuota', () => {
  it("refuses starts beyond the bucket with Step Functions' ThrottlingException once the SDK's retries are spent", async () => {
    const inner = executions();
    const counter = createThrottleCounter();
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 1, now: () => 0 });
    const limited = withStartQuota(inner, { bucket, counter, retries: { sleep: async () => {} } });
    await limited.start('step', 'a', {});
    await limited.start('step', 'b', {});
    const refused = limited.start('step', 'c', {});
    await expect(refused).rejects.toMatchObject({
      name: 'ThrottlingException',
      message: 'Rate exceeded',
      $fault: 'client',
    });
    const error = await refused.catch((e: unknown) => e);
    expect(isTransientPlatformError(error)).toBe(true);
    expect(inner.started).toEqual(['a', 'b']);
    expect(counter.counts()).toEqual({ 'sfn.start': 3, 'sfn.start.surfaced': 1 });
  });

  it('starts a throttled execution once the bucket refilled between the retries', async () => {
    let time = 0;
    const inner = executions();
    const counter = createThrottleCounter();
    const bucket = createTokenBucket({ capacity: 1, refillPerSecond: 1, now: () => time });
    const limited = withStartQuota(inner, {
      bucket,
      counter,
      retries: {
        random: () => 1,
        sleep: async (ms) => {
          time += ms;
        },
      },
    });
    await limited.start('run', 'first', {});
    expect(await limited.start('run', 'second', {})).toEqual({ executionId: 'second', started: true });
    expect(counter.counts()).toEqual({ 'sfn.start': 1 });
  });
});
