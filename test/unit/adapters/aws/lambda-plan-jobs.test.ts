import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createLambdaPlanJobDispatcher } from '../../../../shared/adapters/aws/lambda-plan-jobs.ts';
import { isCairnError } from '../../../../shared/errors.ts';

const lambda = mockClient(LambdaClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  lambda.restore();
});
const dispatcher = () =>
  createLambdaPlanJobDispatcher({
    client: new LambdaClient({}),
    functions: { plan: 'cairn-planner', replan: 'cairn-replanner' },
  });

describe('createLambdaPlanJobDispatcher', () => {
  beforeEach(() => lambda.reset());

  it('invokes the kind’s function asynchronously with the job id', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 202 });

    await dispatcher().dispatch({ jobId: 'j1', kind: 'plan' });
    await dispatcher().dispatch({ jobId: 'j2', kind: 'replan' });

    const inputs = lambda.commandCalls(InvokeCommand).map((c) => c.args[0].input);
    expect(inputs.map((i) => [i.FunctionName, i.InvocationType])).toEqual([
      ['cairn-planner', 'Event'],
      ['cairn-replanner', 'Event'],
    ]);
    expect(JSON.parse(new TextDecoder().decode(inputs[0]?.Payload as Uint8Array))).toEqual({ planJobId: 'j1' });
  });

  it('fails retryably when Lambda did not queue the invocation', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200 });

    const error = await dispatcher()
      .dispatch({ jobId: 'j1', kind: 'plan' })
      .catch((e: unknown) => e);

    expect(isCairnError(error) && error.name === 'PlanJobDispatchError' && error.retryable).toBe(true);
  });
});
