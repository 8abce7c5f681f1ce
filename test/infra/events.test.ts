/**
 * The EventBridge rule wiring on a test-only stack (the replanner and invalidator Lambdas do not exist yet): every
 * shared BUS_RULES entry becomes a rule on cairn's bus with exactly the shared pattern, a Lambda target with the
 * retry policy and the dead-letter queue, and a queue policy that lets only those rules dead-letter into it.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_RETRY, CairnEvents, TARGET_RETRY, toCdkPattern } from '../../infra/constructs/events.ts';
import { BUS_RULES, REVISION_APPROVAL_STEP } from '../../shared/events/bus-rules.ts';
import { matchesPattern } from '../../shared/events/pattern-match.ts';
import { actionsOf, logicalIdAt, resourcesOf, statementsOf, synthStack } from './synth-stack.ts';

let template: Template;
let wiredOnlyReplanner: Template;

function eventsStack(targets: ('Replanner' | 'Invalidator')[]): Template {
  const app = new App({ context: { 'aws:cdk:enable-path-metadata': true } });
  const stack = new Stack(app, 'EventsTest');
  const events = new CairnEvents(stack, 'Events', { stage: 'test', archiveRetentionDays: 7 });
  const fn = (id: string) =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => {};'),
    });
  events.addBusRules(Object.fromEntries(targets.map((target) => [target, fn(target)])));
  return Template.fromStack(stack);
}

beforeAll(() => {
  template = eventsStack(['Replanner', 'Invalidator']);
  wiredOnlyReplanner = eventsStack(['Replanner']);
});

describe('bus rules', () => {
  it('become one rule each on cairn’s bus, with exactly the shared pattern', () => {
    const bus = logicalIdAt(template, 'AWS::Events::EventBus', '/Events/Bus/Resource');
    template.resourceCountIs('AWS::Events::Rule', BUS_RULES.length);
    for (const rule of BUS_RULES) {
      template.hasResourceProperties('AWS::Events::Rule', {
        EventBusName: { Ref: bus },
        Description: rule.description,
        EventPattern: rule.pattern,
        State: 'ENABLED',
      });
    }
  });

  it('target their function with the retry policy and the dead-letter queue', () => {
    const queue = logicalIdAt(template, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    for (const rule of BUS_RULES) {
      const id = logicalIdAt(template, 'AWS::Events::Rule', `/Events/${rule.name}/Resource`);
      const properties = template.findResources('AWS::Events::Rule')[id]?.Properties as { Targets?: unknown[] };
      const targets = properties?.Targets;
      const fn = logicalIdAt(template, 'AWS::Lambda::Function', `/${rule.target}/Resource`);
      expect(targets).toEqual([
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [fn, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
          RetryPolicy: {
            MaximumRetryAttempts: TARGET_RETRY.attempts,
            MaximumEventAgeInSeconds: TARGET_RETRY.maxEventAge.toSeconds(),
          },
        }),
      ]);
    }
  });

  it('send what their function fails after Lambda’s async retries to the async-failures queue, once per function', () => {
    const queue = logicalIdAt(template, 'AWS::SQS::Queue', '/Events/AsyncFailures/Resource');
    const configs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig')).map(
      (r) => r.Properties as { FunctionName: { Ref: string }; [key: string]: unknown },
    );
    const targets = [...new Set(BUS_RULES.map((r) => r.target))];
    expect(configs.map((c) => c.FunctionName.Ref).sort()).toEqual(
      targets.map((t) => logicalIdAt(template, 'AWS::Lambda::Function', `/${t}/Resource`)).sort(),
    );
    for (const config of configs)
      expect(config).toMatchObject({
        MaximumRetryAttempts: ASYNC_RETRY.attempts,
        MaximumEventAgeInSeconds: ASYNC_RETRY.maxEventAge.toSeconds(),
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
      });
    expect(queue).not.toBe(logicalIdAt(template, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource'));
  });

  it('let EventBridge dead-letter into the queue only for these rules', () => {
    const queue = logicalIdAt(template, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    const policy = Object.values(template.findResources('AWS::SQS::QueuePolicy'))[0]?.Properties as {
      PolicyDocument: { Statement: { Effect: string; Principal?: unknown; Condition?: unknown; Resource: unknown }[] };
    };
    const allows = policy.PolicyDocument.Statement.filter((s) => s.Effect === 'Allow');
    expect(allows).toHaveLength(BUS_RULES.length);
    for (const statement of allows) {
      expect(statement).toMatchObject({
        Principal: { Service: 'events.amazonaws.com' },
        Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
        Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [expect.any(String), 'Arn'] } } },
      });
    }
  });

  it('wait for their target: a rule whose function does not exist is not created', () => {
    const replannerRules = BUS_RULES.filter((r) => r.target === 'Replanner');
    wiredOnlyReplanner.resourceCountIs('AWS::Events::Rule', replannerRules.length);
    for (const rule of replannerRules)
      wiredOnlyReplanner.hasResourceProperties('AWS::Events::Rule', { EventPattern: rule.pattern });
  });
});

describe('toCdkPattern', () => {
  it('renames detail-type and keeps every matcher as it is', () => {
    expect(toCdkPattern({ source: ['cairn'], 'detail-type': ['A'], detail: { key: [{ exists: true }] } })).toEqual({
      source: ['cairn'],
      detailType: ['A'],
      detail: { key: [{ exists: true }] },
    });
  });

  it('refuses a top-level field it cannot express', () => {
    expect(() => toCdkPattern({ $or: [{ source: ['a'] }] })).toThrow(/\$or/);
  });
});

describe('the cairn stack', () => {
  it('routes ResourceChanged to the Invalidator function, whose environment is only what it reads', () => {
    const { template: stack } = synthStack();
    const rule = BUS_RULES.find((r) => r.target === 'Invalidator');
    const fn = logicalIdAt(stack, 'AWS::Lambda::Function', '/Functions/Invalidator/Resource');
    const rules = Object.values(stack.findResources('AWS::Events::Rule')).map(
      (r) => r.Properties as { EventPattern: unknown; Targets: { Arn: unknown }[] },
    );
    const routed = rules.find((r) => JSON.stringify(r.EventPattern) === JSON.stringify(rule?.pattern));
    expect(routed?.Targets.map((t) => t.Arn)).toEqual([{ 'Fn::GetAtt': [fn, 'Arn'] }]);
    const properties = stack.findResources('AWS::Lambda::Function')[fn]?.Properties as
      | { Environment: { Variables: Record<string, unknown> } }
      | undefined;
    const names = Object.keys(properties?.Environment.Variables ?? {}).filter((name) => name.startsWith('CAIRN_'));
    // No bus: the invalidator's events travel in the outbox of its writes. The coordinator's rules settle the runs
    // it reopens.
    // It sends each watching run an Invalidate command through the run's mailbox.
    expect(names.sort()).toEqual([
      'CAIRN_MAILBOX_URL',
      'CAIRN_MAX_DEPTH',
      'CAIRN_MAX_REPLANS',
      'CAIRN_MAX_STEPS',
      'CAIRN_RETENTION_DAYS',
      'CAIRN_RUN_DEADLINE_SECONDS',
      'CAIRN_RUN_MACHINE_ARN',
      'CAIRN_STEP_MACHINE_ARN',
      'CAIRN_TABLE_NAME',
    ]);
  });

  it('sends no expired revision approval anywhere: a held revision expires by its own timer in the run', () => {
    const { template: stack } = synthStack();
    expect(BUS_RULES.map((r) => r.name)).not.toContain('RevisionExpiredToReplanner');
    // The bus's rules (the outbox redrive's schedule is a rule with no pattern).
    const patterns = Object.values(stack.findResources('AWS::Events::Rule'))
      .map((r) => (r.Properties as { EventPattern?: unknown }).EventPattern)
      .filter((pattern) => pattern !== undefined)
      .map((pattern) => JSON.stringify(pattern));
    expect(patterns).toHaveLength(BUS_RULES.length);
    for (const pattern of patterns) {
      expect(pattern).not.toContain('ApprovalDecided');
      expect(pattern).not.toContain(REVISION_APPROVAL_STEP);
    }
    // An expired revision approval's ApprovalDecided, as the run publishes it, matches no rule.
    const expired = {
      source: 'cairn',
      'detail-type': 'ApprovalDecided',
      detail: { runId: 'r', stepId: `${REVISION_APPROVAL_STEP}2`, decision: 'expired' },
    };
    expect(BUS_RULES.filter((rule) => matchesPattern(expired, rule.pattern))).toEqual([]);
  });

  it('gives the replanner and the invalidator an on-failure destination they may send to', () => {
    const { template: stack } = synthStack();
    const queue = logicalIdAt(stack, 'AWS::SQS::Queue', '/Events/AsyncFailures/Resource');
    for (const key of ['Replanner', 'Invalidator']) {
      const fn = logicalIdAt(stack, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
      const config = Object.values(stack.findResources('AWS::Lambda::EventInvokeConfig')).find(
        (r) => (r.Properties as { FunctionName: { Ref: string } }).FunctionName.Ref === fn,
      );
      expect(config?.Properties, key).toMatchObject({
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
      });
      const sends = statementsOf(stack).filter(
        ({ owner, statement }) =>
          owner.includes(`${key}Role`) &&
          actionsOf(statement).includes('sqs:SendMessage') &&
          JSON.stringify(resourcesOf(statement)).includes(queue),
      );
      expect(sends, key).toHaveLength(1);
    }
  });
});
