/**
 * The embedded stack with injected faults (infra/local/faults), for the tests that check the engine copes with them:
 * compressed backoff, instant demo capabilities, the conformance pack, and a run start that does what a client does
 * when the API answers 503 (a throttled or timed-out store call): send the same request again, same Idempotency-Key.
 */
import { randomUUID } from 'node:crypto';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/boot.ts';
import { type RunView, summary } from './local-stack.ts';

export const startFaultyStack = (faults: string, faultsSeed: number, options: LocalStackOptions = {}) =>
  startLocalStack({
    conformance: true,
    backoffMs: 5,
    retryIntervalMs: 5,
    demoDelayMs: 0,
    token: 'test-token',
    faults,
    faultsSeed,
    ...options,
  });

/** POST /runs until it is accepted; only a 503 (the platform refused for a moment) is tried again. */
export async function startRunDespiteFaults(
  stack: LocalStack,
  body: Readonly<Record<string, unknown>>,
): Promise<string> {
  const key = randomUUID();
  for (let tries = 1; ; tries++) {
    try {
      return await stack.startRun(body, { 'idempotency-key': key });
    } catch (error) {
      if (tries >= 20 || !String(error).includes('answered 503')) throw error;
    }
  }
}

/** The faults that fired in the stack, by `point:fault`. */
export const injected = (stack: LocalStack): Readonly<Record<string, number>> => stack.faults?.injected() ?? {};

const TERMINAL = new Set(['complete', 'failed', 'cancelled']);

/** Polls the run (a 503 is asked again, as a client would) until it is terminal; fails after `timeoutMs`. */
export async function waitDespiteFaults(stack: LocalStack, runId: string, timeoutMs = 60_000): Promise<RunView> {
  const started = Date.now();
  let last: RunView | undefined;
  for (;;) {
    const { status, json } = await stack.request('GET', `/runs/${runId}`);
    if (status === 200) {
      last = json as RunView;
      if (TERMINAL.has(last.status)) {
        await stack.settled();
        return last;
      }
    } else if (status !== 503) throw new Error(`GET /runs/${runId} answered ${status}: ${JSON.stringify(json)}`);
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `run ${runId} did not settle within ${timeoutMs} ms: ${last ? `${summary(last)} ${JSON.stringify(last.steps.map((s) => s.error))}` : 'never read'}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
