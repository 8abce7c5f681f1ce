/**
 * `lambda.invoke`: faults on the invocations the state machines' Tasks make, raised with the names Step Functions
 * reports, so the machines' own Retry and Catch decide what follows. `throttle`: Lambda refused the invocation and
 * nothing ran. `timeout`: the function ran out of time, before its work or after it (seeded). `crash-after`: the
 * function did its work and its answer was lost (the Lambda service's error, or its process died: Lambda.Unknown).
 */
import type { LocalHandler } from '../local-executions.ts';
import { lambdaLostAnswer, lambdaThrottle, lambdaTimeout } from './aws-errors.ts';
import type { FaultInjector } from './injector.ts';

/** The handler of function `key` with the `lambda.invoke` faults (the handler itself when the spec names none). */
export function faultyHandler(faults: FaultInjector, key: string, handler: LocalHandler): LocalHandler {
  if (!faults.covers('lambda.invoke')) return handler;
  return async (payload) => {
    const rule = faults.draw('lambda.invoke');
    if (rule === undefined) return handler(payload);
    switch (rule.fault) {
      case 'throttle':
        throw lambdaThrottle(key);
      case 'timeout':
        if (faults.detail('lambda.invoke') < 0.5) throw lambdaTimeout(key);
        // Its work is done (or failed) by the time it is cut off: either way, what it answers is lost.
        await handler(payload).catch(() => undefined);
        throw lambdaTimeout(key);
      case 'crash-after':
        await handler(payload).catch(() => undefined);
        throw lambdaLostAnswer(key, faults.detail('lambda.invoke'));
    }
  };
}
