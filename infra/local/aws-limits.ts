/**
 * AWS's hard limits, in one place, with the errors AWS gives when one is crossed, so that the embedded runtime
 * refuses what AWS refuses and cairn's code meets the same names in tests as in production:
 * - Step Functions: 256 KB (262,144 bytes of UTF-8 JSON) for an execution's input, a state's input and output and a
 *   task's result (`States.DataLimitExceeded`, terminal: States.ALL neither retries nor catches it), and for the API's
 *   `input` / `output` parameters (a `ValidationException`, as for every length constraint of the API); execution
 *   names of 1–80 characters (`ValidationException` beyond), from `[A-Za-z0-9-_]` (`InvalidName` otherwise: the
 *   service allows a few more, but only these keep CloudWatch metrics working, and cairn's names keep to them);
 *   SendTaskFailure / StopExecution `error` ≤ 256 and `cause` ≤ 32,768 characters.
 * - Lambda, synchronous invocation: 6 MB request (`RequestTooLargeException`, `Lambda.RequestTooLargeException`
 *   in a Task) and 6 MB response (the invocation fails with `Function.ResponseSizeTooLarge`).
 * - DynamoDB: 400 KB per item, attribute names plus values in UTF-8 (`ValidationException`, "Item size has exceeded
 *   the maximum allowed size"; dynamo-item-size.ts computes it as DynamoDB does).
 * - EventBridge PutEvents: at most 10 entries, whose sizes together stay within 256 KB (an entry's size: the UTF-8
 *   bytes of Source, DetailType, Detail and each of Resources, plus 14 for a Time). Beyond, the whole request is
 *   refused with a `ValidationException` ("Total size of the entries in the request is over the limit."), not
 *   answered with per-entry failures: nothing of it is put on the bus (bus-limits.ts). The size calculation and the
 *   limits are shared/events/put-events.ts's, which the publishers fill their requests with.
 * - API Gateway in front of a Lambda: what the Lambda cannot take or give (6 MB) never reaches the client as it was
 *   (api-payload-limits.ts).
 */
import {
  PUT_EVENTS_LIMITS,
  type PutEventsEntry,
  type PutEventsLimits,
  putEventsEntryBytes,
} from '../../shared/events/put-events.ts';
import { AslError, AwsServiceError, TerminalAslError } from './asl-errors.ts';

export const AWS_LIMITS = Object.freeze({
  /** Step Functions: an execution's input, a state's input and output, a task's result, a token's output. */
  statePayloadBytes: 262_144,
  executionNameChars: 80,
  failureErrorChars: 256,
  failureCauseChars: 32_768,
  /** Lambda, synchronous invocation (RequestResponse): the request, and the response (6 MB + 100 bytes). */
  lambdaRequestBytes: 6_291_456,
  lambdaResponseBytes: 6_291_556,
  /** DynamoDB: one item, attribute names and values. */
  itemBytes: 409_600,
  /** EventBridge PutEvents: entries per request, and their sizes added up. */
  putEventsEntries: PUT_EVENTS_LIMITS.entries,
  putEventsBytes: PUT_EVENTS_LIMITS.bytes,
});

const EXECUTION_NAME_CHARS = /^[A-Za-z0-9_-]+$/;

/** UTF-8 bytes of a value's JSON: how Step Functions and Lambda measure a payload. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');

/** The message of a Step Functions (Coral) length constraint, as the service words it. */
const lengthConstraint = (field: string, max: number): string =>
  `1 validation error detected: Value at '${field}' failed to satisfy constraint: Member must have length less than or equal to ${max}`;

// ---- Step Functions API --------------------------------------------------------------------------------------

/** StartExecution's `name`: too long is a ValidationException, a character outside the set an `InvalidName`. */
export function checkExecutionName(name: string): void {
  if (name.length > AWS_LIMITS.executionNameChars || name.length === 0) {
    throw new AwsServiceError(
      'ValidationException',
      lengthConstraint('name', AWS_LIMITS.executionNameChars).replace("Value at 'name'", `Value '${name}' at 'name'`),
    );
  }
  if (!EXECUTION_NAME_CHARS.test(name)) throw new AwsServiceError('InvalidName', `Invalid Name: '${name}'`);
}

/** StartExecution's `input` and SendTaskSuccess's `output`: at most 256 KB of UTF-8 JSON. */
export function checkApiPayload(field: 'input' | 'output', value: unknown): void {
  if (jsonBytes(value) > AWS_LIMITS.statePayloadBytes)
    throw new AwsServiceError('ValidationException', lengthConstraint(field, AWS_LIMITS.statePayloadBytes));
}

/** SendTaskFailure's and StopExecution's `error` and `cause`. */
export function checkFailureFields(error: string, cause: string): void {
  if (error.length > AWS_LIMITS.failureErrorChars)
    throw new AwsServiceError('ValidationException', lengthConstraint('error', AWS_LIMITS.failureErrorChars));
  if (cause.length > AWS_LIMITS.failureCauseChars)
    throw new AwsServiceError('ValidationException', lengthConstraint('cause', AWS_LIMITS.failureCauseChars));
}

// ---- Step Functions, inside an execution ---------------------------------------------------------------------

export type PayloadKind = 'input' | 'result' | 'output';

const DATA_LIMIT_WORDING: Record<PayloadKind, string> = {
  input: 'has an input with a size exceeding the maximum number of bytes service limit',
  result: 'returned a result with a size exceeding the maximum number of bytes service limit',
  output: 'has an output with a size exceeding the maximum number of bytes service limit',
};

/** `States.DataLimitExceeded`: a state's input (after Parameters), a task's result or a state's output over 256 KB. */
export function dataLimitExceeded(stateName: string, kind: PayloadKind): TerminalAslError {
  return new TerminalAslError('States.DataLimitExceeded', `The state/task '${stateName}' ${DATA_LIMIT_WORDING[kind]}.`);
}

/** Throws `States.DataLimitExceeded` when the value is over the state payload limit. */
export function checkStatePayload(stateName: string, kind: PayloadKind, value: unknown): void {
  if (jsonBytes(value) > AWS_LIMITS.statePayloadBytes) throw dataLimitExceeded(stateName, kind);
}

// ---- Lambda, synchronous invocation --------------------------------------------------------------------------

/** A Task's request to Lambda over 6 MB: the Invoke call fails, and Step Functions names it after the exception. */
export function checkLambdaRequest(payload: unknown): void {
  const bytes = jsonBytes(payload);
  if (bytes > AWS_LIMITS.lambdaRequestBytes)
    throw new AslError(
      'Lambda.RequestTooLargeException',
      `Request must be smaller than ${AWS_LIMITS.lambdaRequestBytes} bytes for the InvokeFunction operation`,
    );
}

/** A response over 6 MB: the invocation fails as a function error of type `Function.ResponseSizeTooLarge`. */
export function checkLambdaResponse(response: unknown): void {
  const bytes = jsonBytes(response);
  if (bytes <= AWS_LIMITS.lambdaResponseBytes) return;
  const errorType = 'Function.ResponseSizeTooLarge';
  const errorMessage = `Response payload size (${bytes} bytes) exceeded maximum allowed payload size (${AWS_LIMITS.lambdaResponseBytes} bytes).`;
  throw new AslError(errorType, JSON.stringify({ errorType, errorMessage }));
}

// ---- EventBridge ---------------------------------------------------------------------------------------------

export { type PutEventsEntry, putEventsEntryBytes } from '../../shared/events/put-events.ts';

/** PutEvents' request checks: 1 to 10 entries, and at most 256 KB of them together (lower `limits`: tests). */
export function checkPutEvents(
  entries: readonly PutEventsEntry[],
  limits: PutEventsLimits = { entries: AWS_LIMITS.putEventsEntries, bytes: AWS_LIMITS.putEventsBytes },
): void {
  if (entries.length < 1 || entries.length > limits.entries)
    throw new AwsServiceError(
      'ValidationException',
      `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${limits.entries}`,
    );
  const bytes = entries.reduce((sum, entry) => sum + putEventsEntryBytes(entry), 0);
  if (bytes > limits.bytes)
    throw new AwsServiceError('ValidationException', 'Total size of the entries in the request is over the limit.');
}

// ---- DynamoDB -------------------------------------------------------------------------------------------------

export const ITEM_TOO_LARGE_MESSAGE = 'Item size has exceeded the maximum allowed size';
export const UPDATE_TOO_LARGE_MESSAGE = 'Item size to update has exceeded the maximum allowed size';
