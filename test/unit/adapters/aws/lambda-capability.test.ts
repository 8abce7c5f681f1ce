import {
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
  ResourceNotFoundException,
  ServiceException,
  TooManyRequestsException,
} from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { lambdaCapability } from '../../../../shared/adapters/aws/lambda-capability.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';

const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:echo';
const lambda = mockClient(LambdaClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  lambda.restore();
});
const binding = () =>
  lambdaCapability({ functionArn: FUNCTION_ARN, client: new LambdaClient({ region: 'eu-west-1' }) });
const payload = (text: string) => new TextEncoder().encode(text) as InvokeCommandOutput['Payload'];
const answer = (text: string, extra: Partial<InvokeCommandOutput> = {}) =>
  lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(text), ...extra });

describe('lambdaCapability', () => {
  beforeEach(() => {
    lambda.reset();
  });

  it('invokes the function synchronously with the documented request and returns the answer as output', async () => {
    answer(JSON.stringify({ value: 'hello' }), { ExecutedVersion: '7' });
    const call = aCall({ upstreamOutputs: { before: { n: 1 } } });

    const result = await binding().invoke(call);

    expect(lambda).toHaveReceivedCommandTimes(InvokeCommand, 1);
    expect(lambda).toHaveReceivedCommandWith(InvokeCommand, {
      FunctionName: FUNCTION_ARN,
      InvocationType: 'RequestResponse',
      Payload: JSON.stringify({
        target: 'tool:conformance.echo',
        input: { value: 'hello' },
        context: {
          runId: 'run-1',
          stepId: 'step-1',
          generation: 1,
          attempt: 1,
          idempotencyKey: 'run-1#step-1#1',
          objective: 'Test the bindings',
          step: { title: 'Echo a value', description: 'Send the value back.' },
          upstreamOutputs: { before: { n: 1 } },
        },
      }),
    });
    expect(Object.keys(lambda.commandCalls(InvokeCommand)[0]?.args[0].input ?? {}).sort()).toEqual([
      'FunctionName',
      'InvocationType',
      'Payload',
    ]);
    expect(result).toEqual({
      output: { value: 'hello' },
      evidence: { binding: 'lambda', functionArn: FUNCTION_ARN, executedVersion: '7' },
    });
  });

  it('unwraps the { output, confidence, note } envelope', async () => {
    answer(JSON.stringify({ output: { x: 1 }, confidence: 0.4, note: 'thin material' }));

    const result = await binding().invoke(aCall());

    expect(result).toMatchObject({ output: { x: 1 }, confidence: 0.4, note: 'thin material' });
  });

  it.each([
    ['above 1', 1.5],
    ['negative', -0.1],
    ['text', '0.9'],
  ])('fails permanently when the envelope confidence is %s', async (_label, confidence) => {
    answer(JSON.stringify({ output: { x: 1 }, confidence }));

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
  });

  it('fails permanently when the payload is not JSON', async () => {
    answer('<html>oops</html>');

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
    expect(String(error.message)).toContain('<html>oops</html>');
  });

  it('fails permanently when the payload is empty', async () => {
    answer('');

    const error = await caught(binding().invoke(aCall()));

    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
    expect(error.retryable).toBe(false);
  });

  it('maps an unhandled function error to a retryable E_FUNCTION_ERROR naming the error', async () => {
    answer(JSON.stringify({ errorType: 'TypeError', errorMessage: 'x is undefined', trace: [] }), {
      FunctionError: 'Unhandled',
    });

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: true });
    expect(codeOf(error)).toBe('E_FUNCTION_ERROR');
    expect(String(error.message)).toContain('Unhandled: TypeError: x is undefined');
  });

  it('keeps the raw text of a function error whose payload is not JSON', async () => {
    answer('Task timed out after 3.00 seconds', { FunctionError: 'Unhandled' });

    const error = await caught(binding().invoke(aCall()));

    expect(error.retryable).toBe(true);
    expect(String(error.message)).toContain('Task timed out after 3.00 seconds');
  });

  it('fails permanently with the code a function reports in { error } unless it says retryable', async () => {
    answer(JSON.stringify({ error: { code: 'E_QUOTA', message: 'quota used up' } }));
    const permanent = await caught(binding().invoke(aCall()));
    answer(JSON.stringify({ error: { code: 'E_BUSY', message: 'try later', retryable: true } }));
    const transient = await caught(binding().invoke(aCall()));

    expect(permanent).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(permanent)).toBe('E_QUOTA');
    expect(String(permanent.message)).toContain('quota used up');
    expect(transient).toMatchObject({ retryable: true });
    expect(codeOf(transient)).toBe('E_BUSY');
  });

  it.each([
    [
      'throttled',
      new TooManyRequestsException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 429 } }),
      'E_CAPABILITY_THROTTLED',
      true,
    ],
    [
      'a service exception',
      new ServiceException({ message: 'internal', $metadata: { httpStatusCode: 500 } }),
      'E_CAPABILITY_UNAVAILABLE',
      true,
    ],
    [
      'a connection reset',
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      'E_CAPABILITY_UNAVAILABLE',
      true,
    ],
    [
      'a missing function',
      new ResourceNotFoundException({ message: 'Function not found', $metadata: { httpStatusCode: 404 } }),
      'E_CAPABILITY_REJECTED',
      false,
    ],
  ])('classifies an Invoke that fails with %s', async (_label, thrown, code, retryable) => {
    lambda.on(InvokeCommand).rejects(thrown);

    const error = await caught(binding().invoke(aCall()));

    expect(error).toMatchObject({ name: 'CapabilityError', retryable });
    expect(codeOf(error)).toBe(code);
  });
});
