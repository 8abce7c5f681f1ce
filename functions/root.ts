/**
 * The Lambdas' side of the composition root: the settings from the environment (shared/config/settings.ts), the
 * AWS adapters (shared/adapters/aws/place.ts) and Powertools (the services' metrics as EMF, an X-Ray subsegment per
 * capability call), handed to the one root (shared/composition/root.ts) that the embedded runtime uses too.
 *
 * Nothing here runs at import: an entry builds its handler on its first invocation (`lazyHandler`), and the root
 * reads the environment then. One root per environment object, so the services of one container share one store.
 */
import { awsPlace } from '../shared/adapters/aws/place.ts';
import { createRoot, type Root } from '../shared/composition/root.ts';
import { type Env, settingsFromEnv } from '../shared/config/settings.ts';
import { isCairnError } from '../shared/errors.ts';
import { observability, observe, observedRegistry } from './observability.ts';

const roots = new WeakMap<Env, Root>();

/** The container's root over `env` (default: process.env), built on first use and kept. */
export function lambdaRoot(env: Env = process.env): Root {
  let root = roots.get(env);
  if (root === undefined) {
    const settings = settingsFromEnv(env);
    root = createRoot(settings, {
      ...awsPlace(settings),
      metrics: () => observability().sink,
      capabilities: { wrap: (registry) => observedRegistry(registry) },
    });
    roots.set(env, root);
  }
  return root;
}

/**
 * The error name a retryable cairn error leaves a function with: Step Functions matches Retry on names, not on the
 * `retryable` flag, and the state machines retry this one (infra/constructs/state-machines.ts, TRANSIENT_ERRORS).
 */
export const TRANSIENT_ERROR_NAME = 'TransientError';

/**
 * What the AWS SDK throws when a call got no answer, once its own retries are spent: a request that timed out or a
 * connection that broke. The call may or may not have been made, and every action answers a repeat idempotently, so
 * it is as transient as a throttle (whose names the machines retry as they are).
 */
const NO_ANSWER_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const NO_ANSWER_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

function isNoAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return (
    (typeof name === 'string' && NO_ANSWER_NAMES.has(name)) || (typeof code === 'string' && NO_ANSWER_CODES.has(code))
  );
}

/**
 * A retryable cairn error, or a call the SDK got no answer to, as TransientError (its own error the cause); anything
 * else as it is.
 */
export function asTransient(error: unknown): unknown {
  const retryable = isCairnError(error) ? error.retryable : isNoAnswer(error);
  if (!retryable) return error;
  const { name, message } = error as Error;
  const transient = new Error(`${name}: ${message}`, { cause: error });
  transient.name = TRANSIENT_ERROR_NAME;
  return transient;
}

/**
 * The exported `handler` of an entry: observed (observability.ts), and built by `build` on the first invocation,
 * so importing the entry (tests, the embedded runtime) reads no environment. A build that throws (a bad setting)
 * fails that invocation and is tried again on the next.
 */
export function lazyHandler<E, C, R>(
  name: string,
  build: () => (event: E, context: C) => Promise<R>,
): (event: E, context: C) => Promise<R> {
  let built: ((event: E, context: C) => Promise<R>) | undefined;
  return observe(name, async (event: E, context: C) => {
    built ??= build();
    try {
      return await built(event, context);
    } catch (error) {
      throw asTransient(error);
    }
  });
}
