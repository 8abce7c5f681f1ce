/**
 * Writes that must not be lost while their caller holds what they record: the end of an idempotency record (a
 * capability's answer, an invalidation's result, or its abort so a retry may act) exists only in this invocation
 * until it is written. A store failure there that may pass (a throttle, a timeout) is tried again here rather than
 * left to a retry of the whole invocation, which would find the record in progress and could not tell whether the
 * work behind it was done. Each write given here must be safe to repeat: a try that landed without its answer makes
 * the next one lose its condition, which counts as success.
 */
import { isRetryable } from '../errors.ts';

/** Tries of one write: lost only if every one fails (0.03⁵ under a 3 % fault rate). */
const WRITE_ATTEMPTS = 5;
const FIRST_PAUSE_MS = 25;

/** How `tryAgain` repeats: how many tries in all, the pause before try n + 1, and which failures are worth it. */
export interface TryAgainPolicy {
  readonly tries: number;
  readonly pauseMs: (triesSoFar: number) => number;
  readonly when: (error: unknown) => boolean;
}

/** Runs `action`, again after a pause while its failure passes `policy.when`, up to `policy.tries`; the last stands. */
export async function tryAgain<T>(policy: TryAgainPolicy, action: (tries: number) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await action(tries);
    } catch (error) {
      if (tries >= policy.tries || !policy.when(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, policy.pauseMs(tries)));
    }
  }
}

const WRITE_POLICY: TryAgainPolicy = {
  tries: WRITE_ATTEMPTS,
  pauseMs: (tries) => FIRST_PAUSE_MS * 2 ** (tries - 1),
  when: isRetryable,
};

/** Runs `write`, again while its failure is retryable, up to WRITE_ATTEMPTS tries; the last failure stands. */
export async function writeAgainWhileRetryable(write: () => Promise<unknown>): Promise<void> {
  await tryAgain(WRITE_POLICY, write);
}
