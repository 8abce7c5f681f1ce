/**
 * A capability bound to a Lambda function, invoked synchronously by ARN with the request documented in
 * shared/capabilities/wire.ts. What fails where:
 * - the Invoke call itself (throttled, 5xx, network, timeout) → retryable; refused (not found, access denied) → permanent;
 * - the function raised (`FunctionError`, e.g. `Unhandled`, a crash or a function timeout) → retryable E_FUNCTION_ERROR;
 * - the function returned `{ error: { code, message, retryable } }` → that error, permanent unless it says retryable;
 * - the function returned something that is not JSON → permanent E_MALFORMED_ANSWER.
 */
import { InvokeCommand, type InvokeCommandOutput, type LambdaClient } from '@aws-sdk/client-lambda';
import { CAPABILITY_ERROR_CODES, capabilityError, sdkCallError } from '../../capabilities/capability-errors.ts';
import { answerToResult, capabilityRequest, parseAnswerJson, reportedError } from '../../capabilities/wire.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../../ports/capabilities.ts';

export interface LambdaCapabilityOptions {
  readonly functionArn: string;
  /** Create it with `maxAttempts: 1`: the step state machine owns retries, so each attempt is visible. */
  readonly client: LambdaClient;
}

const decoder = new TextDecoder();

function payloadText(payload: InvokeCommandOutput['Payload']): string {
  if (payload === undefined) return '';
  const adapter = payload as { transformToString?: () => string };
  return typeof adapter.transformToString === 'function' ? adapter.transformToString() : decoder.decode(payload);
}

function functionErrorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
    if (typeof parsed === 'object' && parsed !== null && typeof parsed.errorMessage === 'string')
      return typeof parsed.errorType === 'string' ? `${parsed.errorType}: ${parsed.errorMessage}` : parsed.errorMessage;
  } catch {
    // A runtime that died before answering sends plain text; show it as it is.
  }
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

export function lambdaCapability(options: LambdaCapabilityOptions): CapabilityBinding {
  const { functionArn, client } = options;
  return {
    kind: 'lambda',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      const source = `Lambda function ${functionArn} (${call.target})`;
      let response: InvokeCommandOutput;
      try {
        response = await client.send(
          new InvokeCommand({
            FunctionName: functionArn,
            InvocationType: 'RequestResponse',
            Payload: JSON.stringify(capabilityRequest(call)),
          }),
          // A step out of time stops waiting for the function (the function itself runs on to its own end).
          call.signal === undefined ? {} : { abortSignal: call.signal },
        );
      } catch (error) {
        throw sdkCallError(error, `Invoking ${source}`, { functionArn });
      }
      const text = payloadText(response.Payload);
      if (response.FunctionError !== undefined)
        throw capabilityError(
          CAPABILITY_ERROR_CODES.functionError,
          `${source} raised ${response.FunctionError}: ${functionErrorMessage(text)}`,
          { retryable: true, details: { functionError: response.FunctionError }, context: { functionArn } },
        );
      const answer = parseAnswerJson(text, source);
      const reported = reportedError(answer);
      if (reported)
        throw capabilityError(reported.code, `${source}: ${reported.message}`, {
          retryable: reported.retryable,
          context: { functionArn },
        });
      return answerToResult(answer, source, {
        binding: 'lambda',
        functionArn,
        ...(response.ExecutedVersion === undefined ? {} : { executedVersion: response.ExecutedVersion }),
      });
    },
  };
}
