/**
 * A deployed stack whose planner is a model behind an OpenAI-compatible endpoint (context modelUrl, model,
 * modelApiKeySecret) and whose agents may be bound to such endpoints (bindings of kind openai with apiKeySecret):
 * the planning functions get the endpoint's settings, and the key's secret is readable by exactly the functions
 * that call the model, and no Bedrock grant is made for it.
 */
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_KEYS, type FunctionKey } from '../../infra/constructs/state-names.ts';
import { actionsOf, logicalIdAt, type PolicyStatementJson, statementsOf, synthStack } from './synth-stack.ts';

const CONTEXT = {
  modelUrl: 'https://models.internal.example.com/v1',
  model: 'llama3.1:70b',
  modelApiKeySecret: 'cairn/test/planner-model',
  bindings: JSON.stringify({
    'agent:report.writer': {
      kind: 'openai',
      baseUrl: 'https://models.internal.example.com/v1',
      model: 'qwen2.5',
      apiKeySecret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:cairn/agents-AbCdEf',
    },
  }),
};

let template: Template;
beforeAll(() => {
  template = synthStack(CONTEXT).template;
});

const statementsFor = (key: FunctionKey): PolicyStatementJson[] => {
  const policy = logicalIdAt(template, 'AWS::IAM::Policy', `/Functions/${key}Role/DefaultPolicy/Resource`);
  return statementsOf(template)
    .filter(({ owner }) => owner === policy)
    .map(({ statement }) => statement);
};
const secretReads = (key: FunctionKey) =>
  statementsFor(key).filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
const environmentOf = (key: FunctionKey): Record<string, unknown> => {
  const id = logicalIdAt(template, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
  const fn = template.toJSON().Resources[id] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
  return fn.Properties.Environment.Variables;
};

describe('an OpenAI-compatible planner model', () => {
  it('is named to the functions that plan (planner, replanner), with the secret of its key', () => {
    for (const key of ['Planner', 'Replanner'] as const)
      expect(environmentOf(key), key).toMatchObject({
        CAIRN_MODEL_URL: CONTEXT.modelUrl,
        CAIRN_MODEL: CONTEXT.model,
        CAIRN_MODEL_API_KEY_SECRET: CONTEXT.modelApiKeySecret,
      });
    // The API only starts planning jobs (an async invoke of the planner or the replanner): it never calls a model.
    for (const key of ['Api', 'Coordinator', 'StepExecutor', 'Validator', 'Invalidator', 'Outbox'] as const)
      expect(
        Object.keys(environmentOf(key)).filter((name) => name.startsWith('CAIRN_MODEL')),
        key,
      ).toEqual([]);
  });

  it('lets exactly the functions that call a model read the secret of its key, and nothing else of Secrets Manager', () => {
    for (const key of ['Planner', 'Replanner'] as const) {
      const reads = secretReads(key);
      expect(reads.map(actionsOf), key).toEqual([['secretsmanager:GetSecretValue']]);
      expect(JSON.stringify(reads[0]?.Resource), key).toContain(':secret:cairn/test/planner-model-??????');
    }
    const executor = secretReads('StepExecutor');
    expect(executor.map((s) => s.Resource)).toEqual([
      'arn:aws:secretsmanager:us-east-1:123456789012:secret:cairn/agents-AbCdEf',
    ]);
    // The API reads webhook secrets when sources are configured; none are here.
    for (const key of FUNCTION_KEYS.filter((k) => !['Planner', 'Replanner', 'StepExecutor'].includes(k)))
      expect(secretReads(key), key).toEqual([]);
  });

  it('needs no Bedrock grant', () => {
    for (const key of FUNCTION_KEYS)
      expect(
        statementsFor(key).filter((s) => actionsOf(s).some((a) => a.startsWith('bedrock:'))),
        key,
      ).toEqual([]);
  });
});

describe('the model context', () => {
  it.each([
    [{ modelUrl: 'https://m.example.com/v1' }, /modelUrl and model go together/],
    [{ model: 'm' }, /modelUrl and model go together/],
    [{ modelUrl: 'ftp://m.example.com', model: 'm' }, /must be an http\(s\) URL/],
    [{ modelApiKeySecret: 's' }, /needs modelUrl and model/],
    [{ modelUrl: 'https://m.example.com/v1', model: 'm', modelId: 'anthropic.claude' }, /two planner models/],
  ])('refuses %j at synth', (context, message) => {
    expect(() => synthStack(context)).toThrow(message);
  });
});

describe('cdk-nag', () => {
  it('finds nothing unsuppressed in a stack with an OpenAI-compatible planner and agent', () => {
    const { stack } = synthStack(CONTEXT, { nag: true });
    const pattern = Match.stringLikeRegexp('AwsSolutions-');
    const annotations = Annotations.fromStack(stack);
    const found = [...annotations.findError('*', pattern), ...annotations.findWarning('*', pattern)];
    expect(found.map((f) => `${f.id}: ${String(f.entry.data).split('\n')[0]}`)).toEqual([]);
  });
});
