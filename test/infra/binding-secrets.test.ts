/**
 * Secrets by reference, deployed: bindings name their credentials by Secrets Manager ARN, the synthesized template
 * (and so the step executor's environment) holds the ARNs and never a credential, only the step executor may read
 * those secrets, and a binding that would put a credential in the template is refused at synth.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployedBindings } from '../../infra/constructs/binding-secrets.ts';
import { FUNCTION_KEYS, type FunctionKey } from '../../infra/constructs/state-names.ts';
import { actionsOf, logicalIdAt, type PolicyStatementJson, statementsOf, synthStack } from './synth-stack.ts';

const ARN = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:${name}-AbCdEf`;
const SECRETS = {
  search: ARN('search-token'),
  crm: ARN('crm-key'),
  ticketing: ARN('ticketing'),
  model: ARN('model-key'),
};
const BINDINGS = {
  'tool:web.search': {
    kind: 'http',
    url: 'https://search.example.com/run',
    headers: { Authorization: { secret: SECRETS.search, prefix: 'Bearer ' }, accept: 'application/json' },
  },
  'tool:crm.lookup': {
    kind: 'mcp',
    transport: 'http',
    url: 'https://crm.example.com/mcp',
    tool: 'lookup',
    headers: { 'x-api-key': { secret: SECRETS.crm, field: 'key' } },
  },
  'tool:tickets.open': {
    kind: 'mcp',
    transport: 'stdio',
    command: 'node',
    args: ['tickets.js'],
    tool: 'open',
    env: { TICKETS_TOKEN: { secret: SECRETS.ticketing }, LOG_LEVEL: 'info' },
  },
  'agent:report.writer': {
    kind: 'openai',
    baseUrl: 'https://models.example.com/v1',
    model: 'm',
    apiKey: { secret: SECRETS.model },
  },
};

let template: Template;
beforeAll(() => {
  template = synthStack({ bindings: JSON.stringify(BINDINGS) }).template;
});

const statementsFor = (key: FunctionKey): PolicyStatementJson[] => {
  const policy = logicalIdAt(template, 'AWS::IAM::Policy', `/Functions/${key}Role/DefaultPolicy/Resource`);
  return statementsOf(template)
    .filter(({ owner }) => owner === policy)
    .map(({ statement }) => statement);
};

/** Every header value (and stdio environment value) of the bindings the step executor is given. */
function configuredValues(): unknown[] {
  const id = logicalIdAt(template, 'AWS::Lambda::Function', '/Functions/StepExecutor/Resource');
  const fn = template.toJSON().Resources[id] as { Properties: { Environment: { Variables: Record<string, string> } } };
  const bindings = JSON.parse(fn.Properties.Environment.Variables.CAIRN_BINDINGS ?? '{}') as Record<
    string,
    { headers?: Record<string, unknown>; env?: Record<string, unknown>; apiKey?: unknown }
  >;
  return Object.values(bindings).flatMap((b) => [
    ...Object.entries(b.headers ?? {}).filter(([name]) => name !== 'accept'),
    ...Object.entries(b.env ?? {}).filter(([name]) => name !== 'LOG_LEVEL'),
    ...(b.apiKey === undefined ? [] : [['apiKey', b.apiKey]]),
  ]);
}

describe('bindings with secrets by reference, synthesized', () => {
  it('keeps no credential in the template: every header, key and credential variable is a secret ARN', () => {
    const values = configuredValues();
    expect(values).toHaveLength(4);
    for (const [name, value] of values as [string, unknown][])
      expect(value, name).toEqual(
        expect.objectContaining({ secret: expect.stringMatching(/^arn:aws:secretsmanager:/) }),
      );
  });

  it('lets the step executor, and no other function, read exactly the secrets the bindings name', () => {
    const reads = statementsFor('StepExecutor').filter((s) =>
      actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
    );
    expect(reads.map(actionsOf)).toEqual([['secretsmanager:GetSecretValue']]);
    expect(new Set([reads[0]?.Resource].flat())).toEqual(new Set(Object.values(SECRETS)));
    const named = JSON.stringify(Object.values(SECRETS));
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'StepExecutor')) {
      const mentions = statementsFor(key).filter((s) =>
        [s.Resource].flat().some((resource) => named.includes(String(resource))),
      );
      expect(mentions, key).toEqual([]);
    }
  });
});

describe('bindings that would put a credential in the template', () => {
  const http = (headers: Record<string, unknown>) => ({
    'tool:x': { kind: 'http', url: 'https://x.example.com', headers },
  });

  it.each([
    [
      'a credential header in plaintext',
      http({ Authorization: 'Bearer abc' }),
      /header Authorization would be in the template/,
    ],
    ['a header read from the environment', http({ 'x-api-key': { env: 'KEY' } }), /read from an environment variable/],
    ['a header read from a file', http({ 'x-api-key': { file: '/run/key' } }), /read from a file/],
    [
      'a stdio server credential variable in plaintext',
      { 'tool:t': { kind: 'mcp', transport: 'stdio', command: 'node', tool: 't', env: { API_TOKEN: 'abc' } } },
      /environment variable API_TOKEN would be in the template/,
    ],
    [
      'a reference that is not a complete secret ARN',
      http({ Authorization: { secret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:token' } }),
      /complete ARN/,
    ],
  ])('refuses %s at synth', (_what, bindings, message) => {
    expect(() => synthStack({ bindings: JSON.stringify(bindings) })).toThrow(message);
  });

  it('keeps plain headers that carry no credential (accept, content-type) as they are', () => {
    expect(deployedBindings(http({ Accept: 'application/json', 'content-type': 'application/json' })).secrets).toEqual(
      [],
    );
  });
});
