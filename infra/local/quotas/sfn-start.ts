/**
 * Step Functions' StartExecution quota on the embedded executions: every start, a duplicate's included (it is a
 * call all the same), takes a token of the account's bucket (token-bucket.ts); a start that finds none is refused
 * as the service refuses it, a `ThrottlingException` ("Rate exceeded", HTTP 400, nothing started), and is tried
 * again behind the SDK's standard retries (sdk-retries.ts) before the caller hears of it, as the SFN client would.
 */
import type { Executions } from '../../../shared/ports/executions.ts';
import { AwsServiceError } from '../asl-errors.ts';
import { type SdkRetryOptions, withSdkRetries } from './sdk-retries.ts';
import type { ThrottleCounter } from './throttle-counter.ts';
import type { TokenBucket } from './token-bucket.ts';

let refused = 0;

/** What the SFN client throws for a throttled StartExecution (an unmodeled error: named by its code). */
export function startThrottled(): AwsServiceError {
  const error = new AwsServiceError('ThrottlingException', 'Rate exceeded', 400);
  Object.assign(error.$metadata, {
    requestId: `throttled-${(refused++).toString(36)}`,
    attempts: 1,
    totalRetryDelay: 0,
  });
  return error;
}

const isStartThrottle = (error: unknown): boolean =>
  error instanceof AwsServiceError && error.name === 'ThrottlingException';

export interface StartQuotaOptions {
  readonly bucket: TokenBucket;
  readonly counter: ThrottleCounter;
  /** The SDK's retries (tests pass their own sleep and jitter). */
  readonly retries?: SdkRetryOptions;
}

export function withStartQuota(executions: Executions, options: StartQuotaOptions): Executions {
  const { bucket, counter } = options;
  return {
    async start(machine, name, input) {
      try {
        return await withSdkRetries(
          () => (bucket.tryTake() ? executions.start(machine, name, input) : Promise.reject(startThrottled())),
          isStartThrottle,
          { ...options.retries, onThrottle: () => counter.count('sfn.start') },
        );
      } catch (error) {
        if (isStartThrottle(error)) counter.count('sfn.start.surfaced');
        throw error;
      }
    },
    sendTaskSuccess: (token, output) => executions.sendTaskSuccess(token, output),
    sendTaskFailure: (token, error, cause) => executions.sendTaskFailure(token, error, cause),
    stop: (executionId, error, cause) => executions.stop(executionId, error, cause),
    stopNamed: (machine, name, error, cause) => executions.stopNamed(machine, name, error, cause),
  };
}
