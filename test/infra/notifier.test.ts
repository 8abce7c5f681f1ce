/**
 * The deployed approval notifier (context notifyUrls): a Lambda on the bus's approval events, its signing secret
 * readable by that function alone, reminders through EventBridge Scheduler with a role only Scheduler assumes.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { NOTIFIER_TIMEOUT_SECONDS, NOTIFY_LEASE_SECONDS } from '../../shared/config/defaults.ts';
import { NOTIFY_RULE } from '../../shared/events/bus-rules.ts';
import { synthStack } from './synth-stack.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };

let template: Template;
let secretId: string;
let notifierRoleId: string;

const resourcesOf = (type: string): [string, Resource][] =>
  Object.entries(template.findResources(type)) as [string, Resource][];

/** The logical ids of every IAM policy (inline on roles or standalone) whose statements name `resourceId`. */
function policiesNaming(resourceId: string): { policy: string; roles: string[]; actions: string[] }[] {
  return resourcesOf('AWS::IAM::Policy').flatMap(([id, resource]) => {
    const statements = (resource.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
    const naming = statements.filter((s) => JSON.stringify(s.Resource).includes(`"${resourceId}"`));
    if (naming.length === 0) return [];
    const roles = (resource.Properties.Roles as { Ref: string }[]).map((r) => r.Ref);
    return [{ policy: id, roles, actions: naming.flatMap((s) => [s.Action].flat() as string[]) }];
  });
}

beforeAll(() => {
  ({ template } = synthStack({ notifyUrls: 'https://hooks.example.com/cairn,https://chat.example.com/in' }));
  const secrets = resourcesOf('AWS::SecretsManager::Secret').filter(
    ([, r]) => r.Properties.Name === 'cairn/test/notify',
  );
  secretId = secrets[0]?.[0] ?? '';
  const fn = resourcesOf('AWS::Lambda::Function').find(([, r]) =>
    JSON.stringify(r.Properties.Environment ?? {}).includes('CAIRN_NOTIFY_SECRET_ARN'),
  );
  const role = fn?.[1].Properties.Role as { 'Fn::GetAtt'?: string[] } | undefined;
  notifierRoleId = role?.['Fn::GetAtt']?.[0] ?? '';
}, 300_000);

describe('the notifier stack', () => {
  it('creates no notifier without notifyUrls', () => {
    const plain = synthStack().template;

    expect(JSON.stringify(plain.toJSON())).not.toContain('CAIRN_NOTIFY_URL');
    // The runs' timers have their group; the notifier's reminders none.
    const groups = Object.values(plain.findResources('AWS::Scheduler::ScheduleGroup'));
    expect(groups.map((g) => g.Properties.Name)).toEqual(['cairn-test']);
  });

  it("gives the function the URLs, the secret by ARN, the console link and the reminders' group and role", () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          CAIRN_NOTIFY_URL: 'https://hooks.example.com/cairn,https://chat.example.com/in',
          CAIRN_NOTIFY_SECRET_ARN: { Ref: secretId },
          CAIRN_CONSOLE_URL: Match.anyValue(),
          CAIRN_NOTIFY_SCHEDULE_GROUP: Match.anyValue(),
          CAIRN_NOTIFY_SCHEDULER_ROLE_ARN: Match.anyValue(),
        }),
      },
    });
    expect(secretId).not.toBe('');
    // Never the secret's value in the template or an environment.
    expect(JSON.stringify(template.toJSON())).not.toMatch(/CAIRN_NOTIFY_SECRET"\s*:/);
  });

  it('lets the notifier function alone read the signing secret', () => {
    const readers = policiesNaming(secretId);

    expect(readers).toHaveLength(1);
    expect(readers[0]?.roles).toEqual([notifierRoleId]);
    expect(readers[0]?.actions).toContain('secretsmanager:GetSecretValue');
  });

  it('subscribes the function to the approval events with the shared rule pattern', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['cairn'], 'detail-type': NOTIFY_RULE.pattern['detail-type'] },
      Targets: [Match.objectLike({ Arn: Match.anyValue(), RetryPolicy: Match.anyValue() })],
    });
  });

  it('holds a notification it sends for less than its Lambda timeout, and sends what it fails for good to the async-failures queue', () => {
    const fn = resourcesOf('AWS::Lambda::Function').find(([, r]) =>
      JSON.stringify(r.Properties.Environment ?? {}).includes('CAIRN_NOTIFY_SECRET_ARN'),
    )?.[1];
    const timeout = fn?.Properties.Timeout as number;

    expect(timeout).toBe(NOTIFIER_TIMEOUT_SECONDS);
    expect(NOTIFY_LEASE_SECONDS).toBeGreaterThan(0);
    expect(NOTIFY_LEASE_SECONDS).toBeLessThan(timeout);
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: Match.stringLikeRegexp('Notifier') },
      MaximumRetryAttempts: Match.anyValue(),
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
  });

  it('lets Scheduler alone invoke it for reminders, and the function create schedules in its own group only', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })],
      },
    });
    const names = resourcesOf('AWS::Scheduler::ScheduleGroup').map(([, g]) => g.Properties.Name);
    expect(names).toContain('cairn-test-notify');
    const notifierPolicy = resourcesOf('AWS::IAM::Policy').find(([, r]) =>
      (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === notifierRoleId),
    );
    const statements = JSON.stringify(notifierPolicy?.[1].Properties.PolicyDocument);
    expect(statements).toContain('scheduler:CreateSchedule');
    expect(statements).toContain('iam:PassedToService');
    expect(statements).not.toContain('states:');
    expect(statements).not.toContain('events:PutEvents');
  });

  it('refuses a notify URL that is not https', () => {
    expect(() => synthStack({ notifyUrls: 'http://hooks.example.com/cairn' })).toThrow(/notifyUrls/);
  });
});
