/**
 * The runs' mailbox in the stack (infra/constructs/mailbox.ts): an encrypted, TLS-only SQS FIFO queue with a FIFO
 * dead-letter queue, read by the decider Lambda in batches of 10 with partial batch responses; the schedule group and
 * the role EventBridge Scheduler sends timers with (it may send to the queue and nothing else); which functions may
 * send commands, with the variables they read; and the decider's grants to schedule timers. The grants are checked
 * against the calls the adapters make (shared/adapters/aws/sqs-mailbox.ts, scheduler-timers.ts).
 */
import { readFileSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAILBOX_SENDERS, TIMER_SCHEDULERS } from '../../infra/constructs/execution-grants.ts';
import { FUNCTION_TIMEOUT_SECONDS } from '../../infra/constructs/functions.ts';
import { MAILBOX_DELIVERY, MAILBOX_SEND_ACTIONS, TIMER_ACTIONS } from '../../infra/constructs/mailbox.ts';
import { FUNCTION_KEYS, type FunctionKey } from '../../infra/constructs/state-names.ts';
import {
  actionsOf,
  logicalIdAt,
  type PolicyStatementJson,
  resourcesOf,
  statementsOf,
  synthStack,
} from './synth-stack.ts';

let template: Template;
let queue: string;
let deadLetters: string;
let schedulerRole: string;
let group: string;

beforeAll(() => {
  template = synthStack().template;
  queue = logicalIdAt(template, 'AWS::SQS::Queue', '/Mailbox/Queue/Resource');
  deadLetters = logicalIdAt(template, 'AWS::SQS::Queue', '/Mailbox/DeadLetters/Resource');
  schedulerRole = logicalIdAt(template, 'AWS::IAM::Role', '/Mailbox/SchedulerRole/Resource');
  group = logicalIdAt(template, 'AWS::Scheduler::ScheduleGroup', '/Mailbox/Timers/Resource');
});

const propertiesOf = (type: string, id: string): Record<string, unknown> =>
  template.findResources(type)[id]?.Properties as Record<string, unknown>;
const functionId = (key: FunctionKey) => logicalIdAt(template, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
const variablesOf = (key: FunctionKey): Record<string, unknown> =>
  (propertiesOf('AWS::Lambda::Function', functionId(key)).Environment as { Variables: Record<string, unknown> })
    .Variables;
const statementsFor = (key: FunctionKey): PolicyStatementJson[] => {
  const policy = logicalIdAt(template, 'AWS::IAM::Policy', `/Functions/${key}Role/DefaultPolicy/Resource`);
  return statementsOf(template)
    .filter(({ owner }) => owner === policy)
    .map(({ statement }) => statement);
};
const text = (value: unknown): string => JSON.stringify(value);
const queueArn = () => ({ 'Fn::GetAtt': [queue, 'Arn'] });
/** The commands an adapter's source sends, as IAM actions of `service`. */
const commandsOf = (file: string, service: string): string[] => {
  const source = readFileSync(new URL(`../../shared/adapters/aws/${file}`, import.meta.url), 'utf8');
  return [...new Set([...source.matchAll(/new (\w+)Command\(/g)].map(([, name]) => `${service}:${name}`))].sort();
};

describe('the mailbox queue', () => {
  it('is FIFO, high-throughput, with content-based deduplication (EventBridge Scheduler needs it) and SQS-managed encryption', () => {
    expect(propertiesOf('AWS::SQS::Queue', queue)).toMatchObject({
      FifoQueue: true,
      ContentBasedDeduplication: true,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      SqsManagedSseEnabled: true,
    });
    // The mailbox's own sends name their deduplication id, which wins over the content hash; the message group is
    // the run.
    const adapter = readFileSync(new URL('../../shared/adapters/aws/sqs-mailbox.ts', import.meta.url), 'utf8');
    expect(adapter).toMatch(/MessageGroupId: letter\.runId/);
    expect(adapter).toMatch(/MessageDeduplicationId: letter\.id/);
  });

  it('dead-letters a letter after 5 receives into an encrypted FIFO queue', () => {
    expect(propertiesOf('AWS::SQS::Queue', queue).RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [deadLetters, 'Arn'] },
      maxReceiveCount: MAILBOX_DELIVERY.maxReceiveCount,
    });
    expect(MAILBOX_DELIVERY.maxReceiveCount).toBe(5);
    expect(propertiesOf('AWS::SQS::Queue', deadLetters)).toMatchObject({
      FifoQueue: true,
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86_400,
    });
  });

  it('refuses plain HTTP, both queues', () => {
    for (const id of [queue, deadLetters]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('keeps a letter invisible at least six times the decider’s timeout (AWS’s advice for a Lambda source)', () => {
    const timeout = propertiesOf('AWS::Lambda::Function', functionId('Decider')).Timeout as number;
    expect(timeout).toBe(FUNCTION_TIMEOUT_SECONDS.Decider);
    expect(propertiesOf('AWS::SQS::Queue', queue).VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
  });
});

describe('the decider', () => {
  it('reads the queue, and only it reads it: batches of 10, partial batch responses, a FIFO-valid maximum concurrency', () => {
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties as Record<string, unknown>)
      .filter((p) => text(p.EventSourceArn) === text(queueArn()));
    expect(mappings).toHaveLength(1);
    const [mapping] = mappings as [Record<string, unknown>];
    expect(mapping).toMatchObject({
      FunctionName: { Ref: functionId('Decider') },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // Lambda takes 2..1000; with FIFO the invocations never outnumber the message groups with letters waiting.
    const { MaximumConcurrency } = mapping.ScalingConfig as { MaximumConcurrency: number };
    expect(MaximumConcurrency).toBeGreaterThanOrEqual(2);
    expect(MaximumConcurrency).toBeLessThanOrEqual(1000);
    // A FIFO source takes no batching window.
    expect(mapping).not.toHaveProperty('MaximumBatchingWindowInSeconds');
  });

  it('may schedule timers in cairn’s own group only, and pass the scheduler role to EventBridge Scheduler only', () => {
    expect(TIMER_ACTIONS).toEqual(commandsOf('scheduler-timers.ts', 'scheduler'));
    expect(propertiesOf('AWS::Scheduler::ScheduleGroup', group)).toEqual({ Name: 'cairn-test' });
    const schedules = statementsFor('Decider').filter((s) => actionsOf(s).some((a) => a.startsWith('scheduler:')));
    expect(schedules).toHaveLength(1);
    expect(actionsOf(schedules[0] as PolicyStatementJson)).toEqual([...TIMER_ACTIONS]);
    expect(text(resourcesOf(schedules[0] as PolicyStatementJson))).toMatch(/:schedule\/cairn-test\/\*"\]\]\}\]$/);
    const passes = statementsFor('Decider').filter((s) => actionsOf(s).includes('iam:PassRole'));
    expect(passes).toEqual([
      {
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [schedulerRole, 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      },
    ]);
    // Nobody else schedules or passes a role.
    for (const key of FUNCTION_KEYS.filter((k) => !TIMER_SCHEDULERS.includes(k))) {
      expect(text(statementsFor(key)), key).not.toMatch(/"scheduler:|"iam:PassRole"/);
    }
  });

  it('is told where the timers go: the queue’s ARN, the scheduler role and the schedule group; no other function is', () => {
    expect(TIMER_SCHEDULERS).toEqual(['Decider']);
    expect(variablesOf('Decider')).toMatchObject({
      CAIRN_MAILBOX_ARN: queueArn(),
      CAIRN_SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [schedulerRole, 'Arn'] },
      CAIRN_SCHEDULE_GROUP: 'cairn-test',
    });
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'Decider')) {
      expect(Object.keys(variablesOf(key)), key).not.toContain('CAIRN_MAILBOX_ARN');
      expect(Object.keys(variablesOf(key)), key).not.toContain('CAIRN_SCHEDULER_ROLE_ARN');
      expect(Object.keys(variablesOf(key)), key).not.toContain('CAIRN_SCHEDULE_GROUP');
    }
  });
});

describe('the scheduler role', () => {
  it('is assumed by EventBridge Scheduler only, for schedules of this account’s group', () => {
    const role = propertiesOf('AWS::IAM::Role', schedulerRole);
    expect(role.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: {
            StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [group, 'Arn'] } },
          },
        },
      ],
    });
    expect(role).not.toHaveProperty('ManagedPolicyArns');
    expect(role).not.toHaveProperty('Policies');
  });

  it('may send to the mailbox queue and do nothing else', () => {
    const owned = statementsOf(template).filter(({ owner }) => {
      const roles = (template.findResources('AWS::IAM::Policy')[owner]?.Properties as { Roles?: unknown[] })?.Roles;
      return text(roles ?? []).includes(`"${schedulerRole}"`) || owner === schedulerRole;
    });
    expect(owned.map(({ statement }) => statement)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queueArn() },
    ]);
  });
});

describe('the senders of commands', () => {
  it('are the functions whose services send runs commands, the decider included (a timer already due)', () => {
    expect([...MAILBOX_SENDERS].sort()).toEqual(
      ['Api', 'Coordinator', 'Decider', 'Invalidator', 'Replanner', 'StepExecutor'].sort(),
    );
    expect([...MAILBOX_SEND_ACTIONS]).toEqual(commandsOf('sqs-mailbox.ts', 'sqs'));
  });

  it('each may send to the queue, and is told its URL; no other function may or is', () => {
    for (const key of FUNCTION_KEYS) {
      const sends = statementsFor(key).filter(
        (s) => actionsOf(s).includes('sqs:SendMessage') && text(resourcesOf(s)) === text([queueArn()]),
      );
      const url = variablesOf(key).CAIRN_MAILBOX_URL;
      if (MAILBOX_SENDERS.includes(key)) {
        expect(sends, key).toEqual([{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queueArn() }]);
        expect(url, key).toEqual({ Ref: queue });
      } else {
        expect(sends, key).toEqual([]);
        expect(url, key).toBeUndefined();
      }
    }
  });

  it('that wait for an answer read it from the table they may already read (REPLY#<id> items of the one table)', () => {
    const replies = readFileSync(new URL('../../shared/adapters/aws/dynamo-replies.ts', import.meta.url), 'utf8');
    expect(replies).toMatch(/PK: `REPLY#\$\{id\}`, SK: 'REPLY'/);
    const table = logicalIdAt(template, 'AWS::DynamoDB::Table', '/Store/Table/Resource');
    for (const key of ['Api', 'Replanner', 'Decider'] as const) {
      const reads = statementsFor(key).filter(
        (s) => actionsOf(s).includes('dynamodb:GetItem') && text(resourcesOf(s)).includes(`"${table}","Arn"`),
      );
      expect(reads.length, key).toBe(1);
    }
    expect(
      statementsFor('Decider').some(
        (s) => actionsOf(s).includes('dynamodb:PutItem') && text(resourcesOf(s)).includes(`"${table}","Arn"`),
      ),
    ).toBe(true);
  });
});
