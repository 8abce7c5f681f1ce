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

/** A retryable cairn error as TransientError (its own error the cause); anything else as it is. */
export function asTransient(error: unknown): unknown {
  if (!isCairnError(error) || !error.retryable) return error;
  const transient = new Error(`${error.name}: ${error.message}`, { cause: error });
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
