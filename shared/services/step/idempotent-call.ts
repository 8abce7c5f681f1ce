/**
 * Calls a side-effecting capability at most once per step generation, through an idempotency record keyed
 * `runId#stepId#generation`. The first caller owns the record and completes it with the answer; a replayed or
 * duplicated execution gets the recorded answer back instead of acting twice. A call that failed aborts the record
 * so a retry may call again; an answer that arrived but cannot be used (too large, not JSON) is recorded too, so a
 * replay fails the same way without repeating the side effect.
 *
 * Right before the side effect, once the record is held, the caller's gate is asked whether the call may still be
 * made (the step is still this execution's, its run still lets steps move): a run cancelled since the step was
 * claimed makes no side effect that had not started. The gate's read is the point that decides: a call that passed
 * it had started before the cancellation took hold, and is recorded as such.
 *
 * The record's end (completion or abort) is the one write that must not be lost: once the capability answered, the
 * answer lives only in this invocation. A store timeout there used to throw, and the Task's retry found the record
 * still in progress and answered E_IDEMPOTENCY_IN_PROGRESS on every attempt, failing a step whose side effect was
 * made (the chaos suite under `store.write:timeout`). So the end is written again, here, while the store's failure is
 * retryable (write-again.ts): a completion that landed without its answer makes the next try lose its condition.
 *
 * Why not let a retry take the record over and call again, as Powertools' idempotency does once an in-progress
 * record outlives its Lambda's timeout? That makes the side effect at-least-once, exactly-once only where the outside
 * system dedupes on the key it is sent; cairn promises at most once per step generation. And a record in progress
 * cannot be told to be dead by who began it: copies of one execution's invocation may run at once (a duplicated
 * delivery), so "my own execution began it" does not mean "nobody is calling". What is left is a process that dies
 * between the call and its recorded end (or every try of the end failing): the step's retries answer
 * E_IDEMPOTENCY_IN_PROGRESS and it fails rather than act twice (docs/embedded.md, "Persistence and resume").
 */

import { CAPABILITY_ERROR_CODES, type CapabilityFailure } from '../../capabilities/capability-errors.ts';
import type { ModelUsage } from '../../ports/capabilities.ts';
import type { Store } from '../../ports/store.ts';
import { writeAgainWhileRetryable as writeEnd } from '../write-again.ts';

/** An answer after the executor's checks of its form; what an idempotency record stores. */
export type CheckedAnswer =
  | {
      readonly ok: true;
      readonly output: unknown;
      readonly confidence?: number;
      readonly note?: string;
      readonly evidence: Readonly<Record<string, unknown>>;
      readonly usage?: ModelUsage;
    }
  | {
      readonly ok: false;
      readonly failure: CapabilityFailure;
      /** 'call': the capability failed (nothing to record); 'answer': it answered, unusably. */
      readonly phase: 'call' | 'answer';
      readonly evidence?: Readonly<Record<string, unknown>>;
      /** A model that answered unusably still consumed tokens. */
      readonly usage?: ModelUsage;
    };

export const idempotencyKey = (runId: string, stepId: string, generation: number): string =>
  `${runId}#${stepId}#${generation}`;

export interface IdempotencyTimes {
  readonly clock: () => Date;
  /** How long a completed record answers replays. */
  readonly ttlSeconds: number;
  /** How long an unfinished call holds the record before another execution may take over (a crashed owner). */
  readonly inProgressSeconds: number;
}

const epochSeconds = (clock: () => Date): number => Math.floor(clock().getTime() / 1000);

function decodeRecorded(result: unknown): CheckedAnswer {
  const value = result as Partial<Record<string, unknown>> | null;
  if (value && value.ok === true && typeof value.evidence === 'object' && value.evidence !== null)
    return value as CheckedAnswer;
  if (value && value.ok === false && typeof value.failure === 'object' && value.failure !== null)
    return { ok: false, failure: value.failure as CapabilityFailure, phase: 'answer' };
  return {
    ok: false,
    phase: 'answer',
    failure: {
      code: CAPABILITY_ERROR_CODES.malformedAnswer,
      message: 'the idempotency record of this step generation holds no usable result',
      retryable: false,
    },
  };
}

/** Whether a side effect may start now; false leaves it unmade. */
export type StartGate = () => Promise<boolean>;

/** What `callOnce` did: answered (called now or replayed), or refused by the gate without calling. */
export type OnceResult =
  | { readonly answer: CheckedAnswer; readonly replayed: boolean; readonly refused?: undefined }
  | { readonly refused: true };

export async function callOnce(
  store: Store,
  key: string,
  times: IdempotencyTimes,
  call: () => Promise<CheckedAnswer>,
  mayStart?: StartGate,
): Promise<OnceResult> {
  const now = epochSeconds(times.clock);
  const existing = await store.beginIdempotent(key, now + times.inProgressSeconds, now);
  if (existing?.status === 'completed') return { answer: decodeRecorded(existing.result), replayed: true };
  if (existing)
    return {
      replayed: false,
      answer: {
        ok: false,
        phase: 'call',
        failure: {
          code: CAPABILITY_ERROR_CODES.idempotencyInProgress,
          message: `another execution of ${key} is calling this side-effecting capability; not calling it twice`,
          retryable: true,
        },
      },
    };
  let answer: CheckedAnswer;
  try {
    if (mayStart && !(await mayStart())) {
      await writeEnd(() => store.abortIdempotent(key));
      return { refused: true };
    }
    answer = await call();
  } catch (error) {
    await writeEnd(() => store.abortIdempotent(key));
    throw error;
  }
  if (!answer.ok && answer.phase === 'call') await writeEnd(() => store.abortIdempotent(key));
  else await writeEnd(() => store.completeIdempotent(key, answer, epochSeconds(times.clock) + times.ttlSeconds));
  return { answer, replayed: false };
}
