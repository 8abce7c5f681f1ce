/**
 * Errors as the embedded runtime's two audiences see them. Inside an execution, aws-local-stepfunctions matches
 * Retry and Catch on an error's `name` (the ASL error name) and uses its message as the Cause. Outside, a caller of
 * the Step Functions API (StartExecution, SendTaskSuccess, ...) gets what the SDK would throw: an error named by the
 * service's error code, with `$fault` and the HTTP status, so cairn's code meets the same names as on AWS.
 */

/** An error as the interpreter sees it: Retry and Catch match `name`; `message` becomes the Cause. */
export class AslError extends Error {
  constructor(name: string, cause: string) {
    super(cause);
    this.name = name;
  }
}

/**
 * An error neither Retry nor Catch may handle (the interpreter honours `isRetryable` / `isCatchable`): Step Functions
 * ends the execution at once. `States.Runtime` and `States.DataLimitExceeded` are of this kind ("a terminal error
 * that can't be caught by States.ALL"); no synthesized machine names either explicitly (asserted in the tests).
 */
export class TerminalAslError extends AslError {
  get isCatchable(): boolean {
    return false;
  }
  get isRetryable(): boolean {
    return false;
  }
}

/** `States.Runtime`: a broken definition or input; Step Functions neither retries nor catches it. */
export class RuntimeFailure extends TerminalAslError {
  constructor(cause: string) {
    super('States.Runtime', cause);
  }
}

/** Lambda reports a function error as errorType = the error's name, and Cause = the JSON of the error. */
export function lambdaError(error: unknown): AslError {
  const errorType = error instanceof Error ? error.name : typeof error;
  const errorMessage = error instanceof Error ? error.message : String(error);
  return new AslError(errorType, JSON.stringify({ errorType, errorMessage }));
}

/** What the AWS SDK throws for a service's client error (a ServiceException): the code is the name. */
export class AwsServiceError extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: { readonly httpStatusCode: number };
  constructor(code: string, message: string, httpStatusCode = 400) {
    super(message);
    this.name = code;
    this.$fault = httpStatusCode >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode };
  }
}
