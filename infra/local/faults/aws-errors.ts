/**
 * The errors an injected fault raises, shaped as the AWS SDK and Step Functions raise them, so that everything above
 * (the store adapter, the handlers' error mapping, the state machines' Retry and Catch, which match on names) treats
 * them exactly as it would treat AWS's own.
 */
import { ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { CAPABILITY_ERROR_CODES, capabilityError } from '../../../shared/capabilities/capability-errors.ts';
import type { CapabilityError } from '../../../shared/errors.ts';

/** What an SDK v3 error carries once the client gave up on it: the response's metadata and, for a throttle, `$retryable`. */
let requests = 0;
const metadata = (httpStatusCode: number) => {
  requests += 1;
  return { httpStatusCode, requestId: `injected-${requests}`, attempts: 1, totalRetryDelay: 0 };
};

/**
 * DynamoDB refusing a call for capacity: ProvisionedThroughputExceededException (a provisioned table or a hot
 * partition) or ThrottlingException (on-demand), HTTP 400, nothing written. `pick` in [0, 1) chooses which.
 */
export function dynamoThrottle(command: string, pick: number): Error {
  const message = `injected fault: ${command} throttled (the request rate exceeds the table's or partition's throughput)`;
  const options = { message, $metadata: metadata(400) };
  const error = pick < 0.5 ? new ProvisionedThroughputExceededException(options) : new ThrottlingException(options);
  return Object.assign(error, { $retryable: { throttling: true } });
}

/**
 * A request that got no answer in time, as the SDK's HTTP handler reports it (`TimeoutError`): the caller cannot tell
 * whether the service acted.
 */
export function networkTimeout(what: string): Error {
  const error = new Error(`injected fault: ${what}: connection timed out after 3000 ms`);
  error.name = 'TimeoutError';
  return Object.assign(error, { $metadata: { attempts: 1, totalRetryDelay: 0 } });
}

/** An error as Step Functions reports a Lambda Task's failure: the name is what Retry and Catch match. */
function taskError(name: string, message: string): Error {
  const error = new Error(`injected fault: ${message}`);
  error.name = name;
  return error;
}

/** Lambda refused the invocation (concurrency exhausted): nothing ran. */
export const lambdaThrottle = (key: string): Error =>
  taskError('Lambda.TooManyRequestsException', `${key}: Rate Exceeded. (Service: Lambda; Status Code: 429)`);

/** The function ran out of time: some or all of its effects may have happened. */
export const lambdaTimeout = (key: string): Error =>
  taskError('Sandbox.Timedout', `${key}: Task timed out after 900.00 seconds`);

/**
 * The function did its work and its answer never reached Step Functions: the Lambda service failed to return it
 * (`Lambda.ServiceException`), or the function's process died on its way out (out of memory, a crash after its
 * writes), which Step Functions reports as `Lambda.Unknown`. `pick` in [0, 1) chooses which; the machines retry both.
 */
export const lambdaLostAnswer = (key: string, pick: number): Error =>
  pick < 0.5
    ? taskError('Lambda.ServiceException', `${key}: the invocation's answer was lost (Status Code: 500)`)
    : taskError('Lambda.Unknown', `${key}: the function's process exited before it answered (Runtime.ExitError)`);

/** Step Functions refusing StartExecution for its API rate (a 400 the SDK names ThrottlingException). */
export function sfnThrottle(name: string): Error {
  const error = new Error(`injected fault: StartExecution ${name}: Rate exceeded`);
  error.name = 'ThrottlingException';
  return Object.assign(error, { $fault: 'client', $metadata: metadata(400), $retryable: { throttling: true } });
}

/** A capability call that got no answer in time (retryable, as the HTTP and MCP bindings report it). */
export const capabilityTimeout = (target: string): CapabilityError =>
  capabilityError(CAPABILITY_ERROR_CODES.timeout, `injected fault: ${target} did not answer in time`, {
    retryable: true,
  });

/** A capability's transient failure (a 503 from its service): retryable. */
export const capabilityUnavailable = (target: string): CapabilityError =>
  capabilityError(CAPABILITY_ERROR_CODES.unavailable, `injected fault: ${target} is briefly unavailable (503)`, {
    retryable: true,
  });
