/**
 * Least privilege, read off the synthesized policies: no wildcard actions anywhere, one role per function with no
 * managed policies, `*` resources only for the APIs that take no ARN, and every other grant scoped to the stack's
 * own table (and its stream), bus, state machines and configured models.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EXECUTION_CALLS,
  FUNCTION_INVOKES,
  INVOKED_FUNCTION_VARIABLE,
  PORT_CALLS,
  type PortCall,
} from '../../infra/constructs/execution-grants.ts';
import { TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../infra/constructs/functions.ts';
import { FUNCTION_KEYS } from '../../infra/constructs/state-names.ts';
import {
  actionsOf,
  FULL_CONTEXT,
  logicalIdAt,
  OIDC_CONTEXT,
  type PolicyStatementJson,
  resourcesOf,
  statementsOf,
  synthStack,
} from './synth-stack.ts';

let plain: Template;
let full: Template;
let oidc: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
  oidc = synthStack(OIDC_CONTEXT).template;
});

/** The only actions allowed on `*`: X-Ray and vended log delivery have no resource-level permissions. */
const RESOURCELESS_ACTIONS = new Set([
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
]);

/** The one action allowed on `*` besides those, for the Outbox Lambda only (see the test for why). */
const STREAM_LISTING = 'dynamodb:ListStreams';

const policyOf = (template: Template, key: string): string =>
  logicalIdAt(template, 'AWS::IAM::Policy', `/Functions/${key}Role/DefaultPolicy/Resource`);
const statementsFor = (template: Template, key: string): PolicyStatementJson[] =>
  statementsOf(template)
    .filter(({ owner }) => owner === policyOf(template, key))
    .map(({ statement }) => statement);
const withAction = (statements: PolicyStatementJson[], prefix: string) =>
  statements.filter((s) => actionsOf(s).some((a) => a.startsWith(prefix)));
const text = (value: unknown): string => JSON.stringify(value);

describe('policies', () => {
  it('name every action: no `*` in any action of any statement', () => {
    for (const template of [plain, full, oidc]) {
      const statements = statementsOf(template);
      expect(statements.length).toBeGreaterThan(10);
      for (const { owner, statement } of statements) {
        for (const action of actionsOf(statement)) expect(action, owner).not.toContain('*');
      }
    }
  });

  it('use `*` as a resource only for X-Ray and log delivery, and the outbox relay’s stream listing', () => {
    let listings = 0;
    for (const { owner, statement } of statementsOf(full)) {
      if (!resourcesOf(statement).includes('*')) continue;
      // dynamodb:ListStreams defines no resource type in IAM: the one grant it can have is `*`. CDK's DynamoEventSource
      // adds it for the Outbox Lambda's event source mapping; no other function reads the stream, and the statement
      // holds that action alone (its stream reads name the stream ARN, see 'table grants').
      if (actionsOf(statement).includes(STREAM_LISTING)) {
        expect(owner).toBe(policyOf(full, 'Outbox'));
        expect(statement).toEqual({ Effect: 'Allow', Action: STREAM_LISTING, Resource: '*' });
        listings++;
        continue;
      }
      for (const action of actionsOf(statement))
        expect(RESOURCELESS_ACTIONS.has(action), `${owner} ${action}`).toBe(true);
    }
    expect(listings).toBe(1);
  });
});

describe('roles', () => {
  it('are one per function, assumed by Lambda, with no managed policy', () => {
    const functions = Object.values(full.findResources('AWS::Lambda::Function'));
    // cairn's functions, and the built-in user pool's token trigger.
    expect(functions).toHaveLength(FUNCTION_KEYS.length + 1);
    const roles = functions.map((fn) => text((fn.Properties as { Role: unknown }).Role));
    expect(new Set(roles).size).toBe(functions.length);
    const paths = [
      ...FUNCTION_KEYS.map((key) => `/Functions/${key}Role/Resource`),
      '/Api/Users/TokenTrigger/Role/Resource',
    ];
    for (const path of paths) {
      const role = full.findResources('AWS::IAM::Role')[logicalIdAt(full, 'AWS::IAM::Role', path)];
      expect(role?.Properties).not.toHaveProperty('ManagedPolicyArns');
      expect(text(role?.Properties)).toContain('lambda.amazonaws.com');
    }
  });
});

describe('table grants', () => {
  it('name the table and its two indexes, never index/*', () => {
    const table = logicalIdAt(full, 'AWS::DynamoDB::Table', '/Store/Table/Resource');
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'Outbox')) {
      expect(withAction(statementsFor(full, key), 'dynamodb:').length, key).toBeGreaterThan(0);
      for (const statement of withAction(statementsFor(full, key), 'dynamodb:')) {
        expect(resourcesOf(statement), key).toEqual([
          { 'Fn::GetAtt': [table, 'Arn'] },
          { 'Fn::Join': ['', [{ 'Fn::GetAtt': [table, 'Arn'] }, '/index/GSI1']] },
          { 'Fn::Join': ['', [{ 'Fn::GetAtt': [table, 'Arn'] }, '/index/GSI_STATUS']] },
        ]);
      }
    }
  });

  it('let the outbox relay read the table’s stream, read out-of-line events, write the audit log and delete what expired runs left, nothing more', () => {
    const table = logicalIdAt(full, 'AWS::DynamoDB::Table', '/Store/Table/Resource');
    expect(withAction(statementsFor(full, 'Outbox'), 'dynamodb:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query', 'dynamodb:DeleteItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
      },
      { Effect: 'Allow', Action: 'dynamodb:ListStreams', Resource: '*' },
      {
        Effect: 'Allow',
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        Resource: { 'Fn::GetAtt': [table, 'StreamArn'] },
      },
    ]);
    // No other function reads the stream.
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'Outbox')) {
      expect(text(statementsFor(full, key)), key).not.toContain('StreamArn');
      expect(text(statementsFor(full, key)), key).not.toMatch(/dynamodb:(ListStreams|DescribeStream|GetRecords)/);
    }
  });

  it('let the validator read only', () => {
    const actions = withAction(statementsFor(full, 'Validator'), 'dynamodb:').flatMap(actionsOf);
    expect(actions.sort()).toEqual([...TABLE_READ_ACTIONS].sort());
  });

  it('cover every DynamoDB call the store adapters make, and only those', () => {
    const dir = new URL('../../shared/adapters/aws/', import.meta.url);
    const used = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      if (!source.includes("'@aws-sdk/client-dynamodb'")) continue;
      for (const match of source.matchAll(/new (\w+)Command\(/g)) used.add(`dynamodb:${match[1]}`);
    }
    expect(used.size).toBeGreaterThan(0);
    expect([...used].sort()).toEqual([...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort());
  });
});

describe('bus and state machine grants', () => {
  it('let only the outbox relay and the API (webhooks’ ResourceChanged) publish, on the stack’s own bus', () => {
    const bus = logicalIdAt(full, 'AWS::Events::EventBus', '/Events/Bus/Resource');
    const publishers = statementsOf(full).filter(({ statement }) => actionsOf(statement).includes('events:PutEvents'));
    expect(publishers.map((p) => p.owner).sort()).toEqual([policyOf(full, 'Api'), policyOf(full, 'Outbox')].sort());
    for (const { statement } of publishers) expect(resourcesOf(statement)).toEqual([{ 'Fn::GetAtt': [bus, 'Arn'] }]);
  });

  it('scope every states: action of the functions to the two machines of this stage', () => {
    for (const key of FUNCTION_KEYS) {
      for (const statement of withAction(statementsFor(full, key), 'states:')) {
        for (const resource of resourcesOf(statement)) expect(text(resource)).toMatch(/:cairn-test-(run|step)(:\*)?"/);
      }
    }
    // One writer per run: the decider starts step and run executions (releases, new generations, a reopened run),
    // answers tokens (the run's waiter, a step's approval) and stops the steps a decision closes.
    const machine = (name: string) => ({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':states:',
          { Ref: 'AWS::Region' },
          ':',
          { Ref: 'AWS::AccountId' },
          `:stateMachine:${name}`,
        ],
      ],
    });
    expect(withAction(statementsFor(full, 'Decider'), 'states:')).toEqual([
      {
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: [machine('cairn-test-run'), machine('cairn-test-step')],
      },
      {
        Effect: 'Allow',
        Action: 'states:SendTaskSuccess',
        Resource: [machine('cairn-test-run'), machine('cairn-test-step')],
      },
      {
        Effect: 'Allow',
        Action: 'states:StopExecution',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':states:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':execution:cairn-test-step:*',
            ],
          ],
        },
      },
    ]);
    // The API starts a new run's execution (its machine plans it); everything else reaches a run as a command.
    expect(withAction(statementsFor(full, 'Api'), 'states:')).toEqual([
      { Effect: 'Allow', Action: 'states:StartExecution', Resource: machine('cairn-test-run') },
    ]);
    for (const key of ['Outbox', 'Planner', 'Validator', 'Coordinator', 'StepExecutor', 'Invalidator', 'Replanner'])
      expect(withAction(statementsFor(full, key), 'states:'), key).toEqual([]);
  });
});

describe('Step Functions grants, from the one table of what each function calls', () => {
  /** `action machine` pairs a function's synthesized policy allows, e.g. `states:StopExecution step-executions`. */
  const granted = (key: string): string[] =>
    withAction(statementsFor(full, key), 'states:')
      .flatMap((statement) =>
        actionsOf(statement).flatMap((action) =>
          resourcesOf(statement).map((resource) => {
            const [, name, executions] = /:(?:stateMachine|execution):cairn-test-(run|step)(:\*)?"/.exec(
              text(resource),
            ) ?? [undefined, '?', undefined];
            return `${action} ${name}${executions ? '-executions' : ''}`;
          }),
        ),
      )
      .sort();
  const declared = (key: keyof typeof EXECUTION_CALLS): string[] =>
    Object.entries(EXECUTION_CALLS[key])
      .flatMap(([call, machines]) => {
        const { action, on } = PORT_CALLS[call as PortCall];
        return (machines ?? []).map((m) => `${action} ${m}${on === 'executions' ? '-executions' : ''}`);
      })
      .sort();

  it('give each function exactly the calls the table declares for it, on the machines it names', () => {
    for (const key of FUNCTION_KEYS) expect(granted(key), key).toEqual(declared(key));
  });

  it('ask only for what the Step Functions adapter can send, and for everything some function sends', () => {
    const adapter = readFileSync(new URL('../../shared/adapters/aws/sfn-executions.ts', import.meta.url), 'utf8');
    const sent = new Set([...adapter.matchAll(/new (\w+)Command\(/g)].map(([, name]) => `states:${name}`));
    const all = new Set(FUNCTION_KEYS.flatMap((key) => granted(key).map((pair) => pair.split(' ')[0])));
    for (const action of all) expect(sent, action).toContain(action);
    // Failing a token is a port call no deployed service makes: nobody is granted it.
    expect([...sent].filter((action) => !all.has(action))).toEqual(['states:SendTaskFailure']);
  });

  it('match the code: only the decider’s effects and the API’s new run call Step Functions', () => {
    // Every call of the Executions port outside the adapters, by file: the shell performing a batch's effects, and
    // POST /runs starting the run's execution. A new call site elsewhere must be granted to its function.
    const calls = new Map<string, Set<string>>();
    const walk = (dir: URL): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) {
          if (!['adapters', 'ports'].includes(entry.name)) walk(new URL(`${entry.name}/`, dir));
          continue;
        }
        if (!entry.name.endsWith('.ts')) continue;
        const source = readFileSync(new URL(entry.name, dir), 'utf8');
        for (const [, method, machine] of source.matchAll(
          /executions\.(start|stopNamed|stop|sendTaskSuccess|sendTaskFailure)\(\s*'?(run|step)?/g,
        )) {
          const file = new URL(entry.name, dir).pathname.replace(/^.*\/(shared|functions)\//, '$1/');
          calls.set(file, (calls.get(file) ?? new Set()).add(`${method}${machine ? ` ${machine}` : ''}`));
        }
      }
    };
    walk(new URL('../../shared/', import.meta.url));
    walk(new URL('../../functions/', import.meta.url));
    expect(Object.fromEntries([...calls].map(([file, set]) => [file, [...set].sort()]))).toEqual({
      'shared/services/runs/performing.ts': ['sendTaskSuccess', 'start run', 'start step', 'stopNamed step'],
      'shared/api/runs.ts': ['start run'],
    });
    expect(granted('Decider')).toEqual(
      [
        'states:SendTaskSuccess run',
        'states:SendTaskSuccess step',
        'states:StartExecution run',
        'states:StartExecution step',
        'states:StopExecution step-executions',
      ].sort(),
    );
    expect(granted('Api')).toEqual(['states:StartExecution run']);
  });
});

describe('model grants', () => {
  const bedrockOf = (template: Template, key: string) => withAction(statementsFor(template, key), 'bedrock:');

  it('allow only bedrock:InvokeModel (what Converse is authorized by), and none without a model', () => {
    for (const key of FUNCTION_KEYS) {
      for (const statement of bedrockOf(full, key)) expect(actionsOf(statement)).toEqual(['bedrock:InvokeModel']);
      expect(bedrockOf(plain, key), key).toEqual([]);
    }
    expect(bedrockOf(full, 'Coordinator')).toEqual([]);
    expect(bedrockOf(full, 'Validator')).toEqual([]);
  });

  it('fence a cross-region profile’s foundation model with the profile ARN', () => {
    const statements = bedrockOf(full, 'Planner');
    expect(statements).toHaveLength(2);
    const [profile, model] = statements as [PolicyStatementJson, PolicyStatementJson];
    expect(text(profile.Resource)).toContain(':inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(text(model.Resource)).toContain(':bedrock:*::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(model.Condition).toEqual({ StringEquals: { 'bedrock:InferenceProfileArn': profile.Resource } });
    // The planner's grant is for the planner model only, not the agents'.
    expect(text(statements)).not.toContain('claude-3-haiku-20240307');
  });

  it('scope a plain model id to this region', () => {
    const agent = bedrockOf(full, 'StepExecutor');
    expect(agent).toHaveLength(1);
    expect(text(agent[0]?.Resource)).toContain(
      '":bedrock:",{"Ref":"AWS::Region"},"::foundation-model/anthropic.claude-3-haiku-20240307-v1:0"',
    );
    expect(agent[0]?.Condition).toBeUndefined();
  });

  it('let the step executor invoke exactly the bound Lambda functions', () => {
    const invoke = withAction(statementsFor(full, 'StepExecutor'), 'lambda:');
    expect(invoke.map((s) => s.Resource)).toEqual(['arn:aws:lambda:us-east-1:123456789012:function:build']);
    expect(withAction(statementsFor(plain, 'StepExecutor'), 'lambda:')).toEqual([]);
  });
});

describe('planning jobs', () => {
  const functionId = (template: Template, key: string) =>
    logicalIdAt(template, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
  const variablesOf = (template: Template, key: string): Record<string, unknown> => {
    const properties = template.findResources('AWS::Lambda::Function')[functionId(template, key)]?.Properties as
      | { Environment?: { Variables?: Record<string, unknown> } }
      | undefined;
    return properties?.Environment?.Variables ?? {};
  };

  it('let each function invoke exactly the functions the table names (the API: the planner and the replanner)', () => {
    expect(FUNCTION_INVOKES).toEqual({ Api: ['Planner', 'Replanner'] });
    for (const key of FUNCTION_KEYS) {
      if (key === 'StepExecutor') continue; // its bound Lambda capabilities, above
      const invoked = withAction(statementsFor(full, key), 'lambda:').map((s) => {
        expect(actionsOf(s)).toEqual(['lambda:InvokeFunction']);
        return text(s.Resource);
      });
      const expected = (FUNCTION_INVOKES[key] ?? []).map((target) =>
        text({ 'Fn::GetAtt': [functionId(full, target), 'Arn'] }),
      );
      expect(invoked.sort(), key).toEqual(expected.sort());
    }
  });

  it('name the invoked functions in the caller’s environment', () => {
    for (const [key, targets] of Object.entries(FUNCTION_INVOKES)) {
      for (const target of targets) {
        const variable = INVOKED_FUNCTION_VARIABLE[target] ?? '';
        expect(variablesOf(full, key)[variable], `${key} ${variable}`).toEqual({ Ref: functionId(full, target) });
      }
    }
  });

  it('keep the model away from the API: its planning jobs ask it in the planner and the replanner', () => {
    expect(withAction(statementsFor(full, 'Api'), 'bedrock:')).toEqual([]);
    expect(withAction(statementsFor(full, 'Planner'), 'bedrock:')).not.toEqual([]);
    expect(withAction(statementsFor(full, 'Replanner'), 'bedrock:')).not.toEqual([]);
    expect(Object.keys(variablesOf(full, 'Api')).filter((name) => name.startsWith('CAIRN_MODEL'))).toEqual([]);
  });
});
