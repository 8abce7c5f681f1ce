/**
 * The stack's operational safety properties: data kept and recoverable, every log group with a retention, tracing
 * on, each function with only its own environment and a concurrency cap where it protects what it calls, and the
 * event bus with an archive and a dead-letter queue that is encrypted and TLS-only.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_KEYS, type FunctionKey } from '../../infra/constructs/state-names.ts';
import { FULL_CONTEXT, logicalIdAt, synthStack } from './synth-stack.ts';

let plain: Template;
let full: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
});

const functionOf = (template: Template, key: FunctionKey) => {
  const id = logicalIdAt(template, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
  return template.findResources('AWS::Lambda::Function')[id]?.Properties as Record<string, unknown>;
};
const envOf = (template: Template, key: FunctionKey): string[] =>
  Object.keys((functionOf(template, key).Environment as { Variables: Record<string, unknown> }).Variables).sort();

describe('table', () => {
  it('is encrypted, point-in-time recoverable and kept on delete by default', () => {
    const table = Object.values(plain.findResources('AWS::DynamoDB::Table'))[0];
    expect(table).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      },
    });
  });

  it('may be deleted with the stack when a dev stage says so', () => {
    const table = Object.values(synthStack({ retainData: 'false' }).template.findResources('AWS::DynamoDB::Table'))[0];
    expect(table).toMatchObject({ DeletionPolicy: 'Delete', Properties: { DeletionProtectionEnabled: false } });
    expect(table?.Properties).toMatchObject({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } });
  });
});

describe('logs', () => {
  it('every log group has a retention (30 days by default, or the context value)', () => {
    const groups = Object.values(full.findResources('AWS::Logs::LogGroup'));
    // the functions, the two machines, the API's access log, the user pool's token trigger
    expect(groups.length).toBe(FUNCTION_KEYS.length + 4);
    for (const group of groups) expect(group.Properties).toMatchObject({ RetentionInDays: 30 });
    const longer = Object.values(synthStack({ logRetentionDays: '90' }).template.findResources('AWS::Logs::LogGroup'));
    for (const group of longer) expect(group.Properties).toMatchObject({ RetentionInDays: 90 });
    expect(() => synthStack({ logRetentionDays: '31' })).toThrow(/logRetentionDays/);
  });

  it('each function writes to its own explicit log group', () => {
    const groups = new Set(Object.keys(full.findResources('AWS::Logs::LogGroup')));
    const used = FUNCTION_KEYS.map(
      (key) => (functionOf(full, key).LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref,
    );
    for (const ref of used) expect(groups.has(ref)).toBe(true);
    expect(new Set(used).size).toBe(FUNCTION_KEYS.length);
  });

  it('both state machines log every event to a log group, and trace', () => {
    const machines = Object.values(full.findResources('AWS::StepFunctions::StateMachine'));
    expect(machines).toHaveLength(2);
    for (const machine of machines) {
      expect(machine.Properties).toMatchObject({
        LoggingConfiguration: {
          Level: 'ALL',
          Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] } } }],
        },
        TracingConfiguration: { Enabled: true },
      });
    }
  });
});

describe('functions', () => {
  it('run on arm64 with the newest Node.js runtime and active tracing', () => {
    for (const key of FUNCTION_KEYS) {
      expect(functionOf(full, key)).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
      });
    }
  });

  it('get only the environment their handlers read', () => {
    const base = ['CAIRN_TABLE_NAME', 'NODE_OPTIONS', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME'];
    // No CAIRN_EVENT_BUS_NAME: the coordinator's, RunStep's and the replanner's events travel in the outbox of their
    // writes; only the outbox relay and the API (webhooks' ResourceChanged) publish.
    // Whoever writes a run's or an approval's item stamps its expiry (the validator reads, the outbox deletes).
    const retention = 'CAIRN_RETENTION_DAYS';
    const coordinator = [
      'CAIRN_MAX_DEPTH',
      'CAIRN_MAX_REPLANS',
      'CAIRN_MAX_STEPS',
      retention,
      'CAIRN_RUN_DEADLINE_SECONDS',
      'CAIRN_RUN_MACHINE_ARN',
      'CAIRN_STEP_MACHINE_ARN',
    ];
    const sorted = (names: string[]) => [...names].sort();
    // Whoever sends runs commands is told the mailbox's URL (the decider too: a timer already due goes straight to
    // the queue); only the decider schedules timers (the queue's ARN, the scheduler role).
    const mailbox = ['CAIRN_MAILBOX_URL'];
    const timers = ['CAIRN_MAILBOX_ARN', 'CAIRN_SCHEDULER_ROLE_ARN', 'CAIRN_SCHEDULE_GROUP'];
    expect(envOf(plain, 'Validator')).toEqual(sorted([...base, 'CAIRN_MAX_DEPTH', 'CAIRN_MAX_STEPS']));
    expect(envOf(plain, 'Planner')).toEqual(sorted([...base, 'CAIRN_MAX_DEPTH', 'CAIRN_MAX_STEPS', retention]));
    // RunStep takes a step from its claim to its dependents' start: the coordinator's settings, and it evaluates
    // plan expressions in the worker its bundle carries.
    const stepExecutor = [...coordinator, ...mailbox, 'CAIRN_EXPRESSION_WORKER'];
    expect(envOf(plain, 'StepExecutor')).toEqual(sorted([...base, ...stepExecutor]));
    expect(envOf(plain, 'Coordinator')).toEqual(sorted([...base, ...coordinator, ...mailbox]));
    expect(envOf(plain, 'Invalidator')).toEqual(sorted([...base, ...coordinator, ...mailbox]));
    // The outbox's redrive reads the stream's on-failure queue.
    const outbox = ['CAIRN_EVENT_BUS_NAME', 'CAIRN_OUTBOX_DEAD_LETTERS_URL'];
    expect(envOf(plain, 'Outbox')).toEqual(sorted([...base, ...outbox]));
    expect(envOf(full, 'Outbox')).toEqual(sorted([...base, ...outbox]));
    expect(envOf(plain, 'Replanner')).toEqual(sorted([...base, ...coordinator, ...mailbox]));
    expect(envOf(full, 'Replanner')).toEqual(sorted([...base, ...coordinator, ...mailbox, 'CAIRN_MODEL_ID']));
    // The decider: the machines and the run settings its rules read, no plan limits, no bus (its announcements
    // travel in the outbox of its commits), no model, no bindings.
    const decider = [
      'CAIRN_MAX_REPLANS',
      retention,
      'CAIRN_RUN_DEADLINE_SECONDS',
      'CAIRN_RUN_MACHINE_ARN',
      'CAIRN_STEP_MACHINE_ARN',
      ...mailbox,
      ...timers,
    ];
    expect(envOf(plain, 'Decider')).toEqual(sorted([...base, ...decider]));
    expect(envOf(full, 'Decider')).toEqual(sorted([...base, ...decider]));
    expect(envOf(full, 'Planner')).toContain('CAIRN_MODEL_ID');
    expect(envOf(full, 'StepExecutor')).toEqual(sorted([...base, ...stepExecutor, 'CAIRN_BINDINGS']));
    expect(envOf(full, 'Api')).toEqual(
      sorted([
        ...base,
        ...coordinator,
        ...mailbox,
        'CAIRN_EVENT_BUS_NAME',
        'CAIRN_PLANNER_FUNCTION_NAME',
        'CAIRN_REPLANNER_FUNCTION_NAME',
        'CAIRN_WEBHOOK_SECRET_PREFIX',
        'CAIRN_CONSOLE_DIR',
        'CAIRN_CONSOLE_OIDC_AUTHORIZE_URL',
        'CAIRN_CONSOLE_OIDC_CLIENT_ID',
        'CAIRN_CONSOLE_OIDC_TOKEN_URL',
        'CAIRN_ROLE_GROUPS_CLAIM',
        'CAIRN_ROLE_SCOPES_CLAIM',
        'CAIRN_ROLE_SCOPE_PREFIX',
        'CAIRN_TENANT_CLAIM',
      ]),
    );
  });

  it('reserve no concurrency unless told to, and then only for the planner and the step executor', () => {
    const reserved = (template: Template) =>
      Object.fromEntries(FUNCTION_KEYS.map((key) => [key, functionOf(template, key).ReservedConcurrentExecutions]));
    expect(Object.values(reserved(plain)).every((value) => value === undefined)).toBe(true);
    const custom = synthStack({ plannerConcurrency: '5', executorConcurrency: '200' }).template;
    expect(reserved(custom)).toEqual({
      Planner: 5,
      Validator: undefined,
      Coordinator: undefined,
      StepExecutor: 200,
      Api: undefined,
    });
    const none = synthStack({ plannerConcurrency: 'none', executorConcurrency: 'none' }).template;
    expect(Object.values(reserved(none)).every((value) => value === undefined)).toBe(true);
  });
});

describe('event bus', () => {
  it('is the stage’s own bus, archived for replay', () => {
    const bus = logicalIdAt(full, 'AWS::Events::EventBus', '/Events/Bus/Resource');
    full.hasResourceProperties('AWS::Events::EventBus', { Name: 'cairn-test' });
    full.hasResourceProperties('AWS::Events::Archive', {
      SourceArn: { 'Fn::GetAtt': [bus, 'Arn'] },
      RetentionDays: 30,
    });
  });

  it('has an encrypted, TLS-only dead-letter queue', () => {
    const queue = logicalIdAt(full, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    full.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    full.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queue }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('gives every rule target the dead-letter queue and a retry policy', () => {
    const queue = logicalIdAt(full, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    for (const rule of Object.values(full.findResources('AWS::Events::Rule'))) {
      for (const target of (rule.Properties as { Targets: Record<string, unknown>[] }).Targets) {
        expect(target).toMatchObject({
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: expect.any(Number) },
        });
      }
    }
  });
});
