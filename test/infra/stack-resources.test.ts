/**
 * CDK assertions on the synthesized stack's resources besides the state machines: the Lambdas' runtime and
 * configuration, and the table.
 */
import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_KEYS } from '../../infra/constructs/state-names.ts';
import { extractStateMachines } from '../../infra/local/synth.ts';
import { configFromContext } from '../../infra/stack.ts';
import { cairnFunctions } from './synth-stack.ts';
import { synthMachines } from './synthesized-machines.ts';

let template: Template;

beforeAll(() => {
  ({ template } = synthMachines());
});

/** A Lambda's environment (resolved to text: ARNs built with Fn::Join become their joined strings with refs). */
const environmentOf = (key: string): Record<string, string> => {
  const { functionOf } = extractStateMachines(template.toJSON() as Parameters<typeof extractStateMachines>[0]);
  const [, fn] =
    Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) => functionOf(id) === key) ?? [];
  if (!fn) throw new Error(`no function ${key}`);
  const variables = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
};

describe('functions', () => {
  it('run on arm64 with a current Node.js runtime (22 or newer)', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    // cairn's functions, and the built-in user pool's token trigger.
    expect(functions).toHaveLength(FUNCTION_KEYS.length + 1);
    for (const fn of functions) {
      const { Runtime, Architectures } = fn.Properties as { Runtime: string; Architectures: string[] };
      expect(Runtime).not.toBe('nodejs20.x');
      expect(Number(/^nodejs(\d+)\.x$/.exec(Runtime)?.[1])).toBeGreaterThanOrEqual(22);
      expect(Architectures).toEqual(['arm64']);
    }
  });

  it('get the limits from context and the machine ARNs without a circular reference', () => {
    const functions = cairnFunctions(template);
    expect(functions).toHaveLength(FUNCTION_KEYS.length);
    for (const fn of functions)
      expect(fn).toMatchObject({ Environment: { Variables: { CAIRN_TABLE_NAME: expect.anything() } } });
    for (const key of ['Coordinator', 'Api']) {
      expect(environmentOf(key)).toMatchObject({
        CAIRN_MAX_STEPS: '12',
        CAIRN_RUN_DEADLINE_SECONDS: '600',
        CAIRN_STEP_MACHINE_ARN: expect.stringContaining('stateMachine:cairn-test-step'),
      });
    }
    for (const key of ['Planner', 'Validator']) expect(environmentOf(key)).toMatchObject({ CAIRN_MAX_STEPS: '12' });
  });

  it('rejects a limit in context that is not a positive integer', () => {
    const app = new App({ context: { maxDepth: 'deep' } });
    expect(() => configFromContext(app.node)).toThrow(/maxDepth/);
  });
});

describe('table', () => {
  it('is on-demand with PK/SK, GSI1, GSI_STATUS, point-in-time recovery and TTL on expiresAt', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'GSI1',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
        Match.objectLike({
          IndexName: 'GSI_STATUS',
          KeySchema: [
            { AttributeName: 'GSI_STATUS_PK', KeyType: 'HASH' },
            { AttributeName: 'GSI_STATUS_SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });
});
