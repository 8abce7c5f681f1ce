import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandInput,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { InvokeCommand, type InvokeCommandInput, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { bedrockAgentCapability } from '../../../shared/adapters/aws/bedrock-agent-capability.ts';
import { lambdaCapability } from '../../../shared/adapters/aws/lambda-capability.ts';
import { httpCapability } from '../../../shared/adapters/http-capability.ts';
import { openAIAgentCapability } from '../../../shared/adapters/openai/openai-agent-capability.ts';
import { builtinTool } from '../../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../../shared/capabilities/capability-errors.ts';
import type { CapabilityRequest } from '../../../shared/capabilities/wire.ts';
import { describeBindingBehaviour, scriptedAnswer } from '../../support/capability-binding-behaviour.ts';
import { briefInput, completion, startFakeOpenAI, status } from '../../support/fake-openai-server.ts';
import { startHttpServer } from '../../support/http-server.ts';

describeBindingBehaviour('builtin', async () => ({
  kind: 'builtin',
  binding: builtinTool('scripted', async (input) => {
    const answer = scriptedAnswer(input);
    if ('fail' in answer) throw capabilityError('E_SCRIPTED', 'scripted failure', answer.fail);
    return answer.output;
  }),
}));

describeBindingBehaviour('lambda (mocked Lambda service)', async () => {
  const lambda = mockClient(LambdaClient);
  lambda.on(InvokeCommand).callsFake((input: InvokeCommandInput): InvokeCommandOutput => {
    const request = JSON.parse(String(input.Payload)) as CapabilityRequest;
    const answer = scriptedAnswer(request.input);
    const body =
      'fail' in answer
        ? answer.fail.retryable
          ? { errorType: 'Error', errorMessage: 'crashed' }
          : { error: { code: 'E_SCRIPTED', message: 'scripted failure', retryable: false } }
        : answer.output;
    return {
      $metadata: {},
      StatusCode: 200,
      Payload: new TextEncoder().encode(JSON.stringify(body)) as InvokeCommandOutput['Payload'],
      ...('fail' in answer && answer.fail.retryable ? { FunctionError: 'Unhandled' } : {}),
    };
  });
  return {
    kind: 'lambda',
    binding: lambdaCapability({
      functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:echo',
      client: new LambdaClient({ region: 'us-east-1' }),
    }),
    stop: async () => {
      lambda.restore();
    },
  };
});

describeBindingBehaviour('http (local server)', async () => {
  const server = await startHttpServer();
  server.respondWith((request, response) => {
    const answer = scriptedAnswer((JSON.parse(request.body) as CapabilityRequest).input);
    const status = 'fail' in answer ? (answer.fail.retryable ? 503 : 400) : 200;
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify('fail' in answer ? { message: 'scripted failure' } : answer.output));
  });
  return {
    kind: 'http',
    binding: httpCapability({ url: server.url, timeoutMs: 5000, internal: true }),
    stop: () => server.close(),
  };
});

describeBindingBehaviour('bedrock (mocked model that echoes the input of its brief)', async () => {
  const bedrock = mockClient(BedrockRuntimeClient);
  bedrock.on(ConverseCommand).callsFake((input: ConverseCommandInput) => {
    const brief = input.messages?.[0]?.content?.[0]?.text ?? '';
    const block = /# Input\n```json\n([\s\S]*?)\n```/.exec(brief)?.[1] ?? 'null';
    const answer = scriptedAnswer(JSON.parse(block));
    if ('fail' in answer) {
      const options = { message: 'scripted failure', $metadata: {} };
      throw answer.fail.retryable ? new ThrottlingException(options) : new ValidationException(options);
    }
    return {
      output: {
        message: {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 't', name: 'submit_result', input: { output: answer.output, confidence: 1 } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      metrics: { latencyMs: 1 },
    };
  });
  return {
    kind: 'bedrock',
    binding: bedrockAgentCapability({
      modelId: 'test-model',
      client: new BedrockRuntimeClient({ region: 'us-east-1' }),
    }),
    stop: async () => {
      bedrock.restore();
    },
  };
});

describeBindingBehaviour(
  'openai (fake OpenAI-compatible server whose model echoes the input of its brief)',
  async () => {
    const fake = await startFakeOpenAI({
      reply: (request) => {
        const answer = scriptedAnswer(briefInput(request));
        if ('fail' in answer) return status(answer.fail.retryable ? 503 : 400);
        return completion({ output: answer.output, confidence: 1 });
      },
    });
    return {
      kind: 'openai',
      binding: openAIAgentCapability({ baseUrl: fake.baseUrl, model: 'fake-model' }),
      stop: () => fake.close(),
    };
  },
);
