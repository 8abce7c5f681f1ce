/**
 * Another process on the same embedded stack, as a second Lambda container would be: the stack's executions and
 * catalog with the stack's store or a wrapper of it, so a test can run a service (replanner, invalidator, ...) beside
 * the stack's own and make its store calls fail or race at a chosen point.
 */
import { randomUUID } from 'node:crypto';
import { ThrottlingException } from '@aws-sdk/client-dynamodb';
import { CairnError } from '../../shared/errors.ts';
import type { Store } from '../../shared/ports/store.ts';
import type { CoordinatorConfig, CoordinatorDeps } from '../../shared/services/coordinator.ts';
import type { LocalStack } from './local-stack.ts';

/** The services' dependencies in another process on `stack`; `config` adds to (or overrides) the defaults. */
export const secondProcessDeps = (
  stack: LocalStack,
  store: Store = stack.store,
  config: Partial<CoordinatorConfig> = {},
): CoordinatorDeps => ({
  store,
  mailbox: stack.mailbox,
  executions: stack.executions,
  catalog: stack.catalog,
  clock: () => new Date(),
  newId: randomUUID,
  config: {
    runDeadlineSeconds: 86_400,
    retryBaseSeconds: 1,
    retryCapSeconds: 60,
    maxSteps: 64,
    maxDepth: 16,
    traceRetention: 'last',
    ...config,
  },
});

/** The error DynamoDB's throttle leaves once the SDK gave up retrying it. */
export const injectedThrottle = (): ThrottlingException =>
  new ThrottlingException({ message: 'injected: Rate exceeded', $metadata: {} });

/**
 * What ends a call's process where it stands (a crash, the function's time running out): unlike a throttle, nothing
 * in the process tries again after it (a cancel's tries in place stop at it, say).
 */
export const injectedCrash = (): CairnError => new CairnError('InjectedCrash', 'injected: the process died');

/**
 * `store` with each call of `methods` going through `around`, which is given the call itself (to make, or not) and
 * its arguments; every other method is the store's own.
 */
export function interceptStore(
  store: Store,
  methods: readonly (keyof Store)[],
  around: (call: () => Promise<unknown>, args: unknown[]) => Promise<unknown>,
): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (!methods.includes(key as keyof Store) || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        around(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), args);
    },
  });
}
