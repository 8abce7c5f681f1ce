import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../../shared/errors.ts';
import { writeAgainWhileRetryable } from '../../../shared/services/write-again.ts';

const timeout = () => Object.assign(new Error('no answer'), { name: 'TimeoutError' });

/** A write that fails `failures` times with `error`, then succeeds; counts its tries. */
function flakyWrite(failures: number, error: () => Error = timeout) {
  const write = vi.fn(async () => {
    if (write.mock.calls.length <= failures) throw error();
  });
  return write;
}

describe('writeAgainWhileRetryable', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes again after a timeout until the write answers', async () => {
    const write = flakyWrite(3);

    const done = writeAgainWhileRetryable(write);
    await vi.runAllTimersAsync();
    await done;

    expect(write).toHaveBeenCalledTimes(4);
  });

  it('lets the last failure stand after five tries', async () => {
    const write = flakyWrite(10);

    const done = writeAgainWhileRetryable(write);
    const outcome = expect(done).rejects.toMatchObject({ name: 'TimeoutError' });
    await vi.runAllTimersAsync();
    await outcome;

    expect(write).toHaveBeenCalledTimes(5);
  });

  it('does not write again after a failure that will not pass', async () => {
    const write = flakyWrite(1, () => new ConflictError('lost for good'));

    await expect(writeAgainWhileRetryable(write)).rejects.toMatchObject({ name: 'ConflictError' });

    expect(write).toHaveBeenCalledTimes(1);
  });
});
