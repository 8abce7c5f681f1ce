/**
 * The outbox's deployed half: the table's change stream (new and old images) feeds the Outbox Lambda through one
 * event source mapping that passes only the records carrying an outbox (OUTBOX_STREAM_FILTER) and run items TTL
 * removed (EXPIRED_RUN_STREAM_FILTER), in order, with
 * bisection, retries and an encrypted, TLS-only dead-letter queue that alarms; the Outbox Lambda reads only its table
 * and bus names and its dead-letter queue's URL, and may do only what relaying and redriving take. The redrive runs
 * on a schedule; the stream's iterator age is alarmed on.
 */
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_ITERATOR_AGE_ALARM_MS } from '../../infra/constructs/observability.ts';
import { OUTBOX_DELIVERY } from '../../infra/constructs/outbox.ts';
import { EXPIRED_RUN_STREAM_FILTER, expiredRunOf } from '../../shared/events/expired-runs.ts';
import { OUTBOX_STREAM_FILTER, outboxOf, type StreamRecord } from '../../shared/events/outbox.ts';
import { type EventPattern, matchesPattern } from '../../shared/events/pattern-match.ts';
import { REDRIVE_EVERY_SECONDS, REDRIVE_HIDE_SECONDS } from '../../shared/services/outbox/redrive.ts';
import { FULL_CONTEXT, logicalIdAt, type PolicyStatementJson, statementsOf, synthStack } from './synth-stack.ts';

let plain: Template;
let full: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
});

const propertiesOf = (template: Template, type: string, pathSuffix: string): Record<string, unknown> =>
  template.findResources(type)[logicalIdAt(template, type, pathSuffix)]?.Properties as Record<string, unknown>;
const ids = (template: Template) => ({
  table: logicalIdAt(template, 'AWS::DynamoDB::Table', '/Store/Table/Resource'),
  bus: logicalIdAt(template, 'AWS::Events::EventBus', '/Events/Bus/Resource'),
  relay: logicalIdAt(template, 'AWS::Lambda::Function', '/Functions/Outbox/Resource'),
  logs: logicalIdAt(template, 'AWS::Logs::LogGroup', '/Functions/OutboxLogs/Resource'),
  deadLetters: logicalIdAt(template, 'AWS::SQS::Queue', '/Outbox/DeadLetters/Resource'),
  policy: logicalIdAt(template, 'AWS::IAM::Policy', '/Functions/OutboxRole/DefaultPolicy/Resource'),
});
/** The event source mappings that read the table's stream (the other one reads the runs' mailbox: mailbox.test.ts). */
const mappings = (template: Template) =>
  Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
    .map((m) => m.Properties as Record<string, unknown> & { FilterCriteria: { Filters: { Pattern: string }[] } })
    .filter((p) => JSON.stringify(p.EventSourceArn).includes('"StreamArn"'));

describe('the table', () => {
  it('streams every change with its new and old images', () => {
    expect(propertiesOf(plain, 'AWS::DynamoDB::Table', '/Store/Table/Resource').StreamSpecification).toEqual({
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    });
  });
});

describe('the event source mapping', () => {
  it('is the only one, from the table’s stream to the Outbox Lambda, in order, bisected, retried, dead-lettered', () => {
    const { table, relay, deadLetters } = ids(full);
    // Two mappings in the stack: this one, and the runs' mailbox to the decider.
    expect(Object.keys(full.findResources('AWS::Lambda::EventSourceMapping'))).toHaveLength(2);
    expect(mappings(full)).toEqual([
      {
        EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
        FunctionName: { Ref: relay },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 100,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        MaximumRecordAgeInSeconds: 24 * 60 * 60,
        // One batch per shard at a time: an item's announcements reach the bus in the order they were written.
        ParallelizationFactor: 1,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [deadLetters, 'Arn'] } } },
        FilterCriteria: { Filters: [{ Pattern: expect.any(String) }, { Pattern: expect.any(String) }] },
      },
    ]);
    expect(OUTBOX_DELIVERY).toMatchObject({ batchSize: 100, retryAttempts: 10 });
    expect(OUTBOX_DELIVERY.maxRecordAge.toSeconds()).toBe(24 * 60 * 60);
  });

  it('filters with exactly OUTBOX_STREAM_FILTER and EXPIRED_RUN_STREAM_FILTER', () => {
    const [mapping] = mappings(plain);
    const filters = mapping?.FilterCriteria.Filters ?? [];
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      OUTBOX_STREAM_FILTER,
      EXPIRED_RUN_STREAM_FILTER,
    ]);
  });

  it('passes a run item TTL removed, and no other removal', () => {
    const pattern = JSON.parse(mappings(plain)[0]?.FilterCriteria.Filters[1]?.Pattern ?? '{}') as EventPattern;
    const ttl = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
    const run = { PK: { S: 'RUN#r-1' }, SK: { S: 'RUN' } };
    const expired: StreamRecord = {
      eventName: 'REMOVE',
      userIdentity: ttl,
      dynamodb: { Keys: run, OldImage: { ...run, idempotencyKey: { S: 'k-1' } } },
    };
    expect(matchesPattern(expired, pattern)).toBe(true);
    expect(expiredRunOf(expired)).toEqual({ runId: 'r-1', runKey: 'k-1' });
    const deletedByHand: StreamRecord = { eventName: 'REMOVE', dynamodb: { Keys: run, OldImage: run } };
    const stepExpired: StreamRecord = { ...expired, dynamodb: { Keys: { ...run, SK: { S: 'STEP#s' } } } };
    const approvalExpired: StreamRecord = { ...expired, dynamodb: { Keys: { PK: { S: 'APPROVAL#a' }, SK: run.SK } } };
    for (const record of [deletedByHand, stepExpired, { ...expired, eventName: 'MODIFY' }]) {
      expect(matchesPattern(record, pattern)).toBe(false);
      expect(expiredRunOf(record)).toBeUndefined();
    }
    expect(expiredRunOf(approvalExpired)).toBeUndefined();
  });

  it('passes the records that announce and holds back the table’s other writes', () => {
    // Lambda's filter criteria use EventBridge's pattern syntax: the in-process matcher judges the synthesized filter.
    const pattern = JSON.parse(mappings(plain)[0]?.FilterCriteria.Filters[0]?.Pattern ?? '{}') as EventPattern;
    const outbox = (id: string) => ({
      S: JSON.stringify({ id, runId: 'r-1', at: '2026-01-01T00:00:00.000Z', events: [] }),
    });
    const keys = { PK: { S: 'RUN#r-1' }, SK: { S: 'STEP#s-1' } };
    const announcing: StreamRecord = {
      eventName: 'MODIFY',
      dynamodb: { NewImage: { ...keys, outbox: outbox('e-1') } },
    };
    const inserted: StreamRecord = { eventName: 'INSERT', dynamodb: { NewImage: { ...keys, outbox: outbox('e-2') } } };
    const quiet: StreamRecord = { eventName: 'MODIFY', dynamodb: { NewImage: keys, OldImage: keys } };
    const removed: StreamRecord = { eventName: 'REMOVE', dynamodb: { OldImage: { ...keys, outbox: outbox('e-1') } } };
    const numeric: StreamRecord = { eventName: 'MODIFY', dynamodb: { NewImage: { ...keys, outbox: { N: '1' } } } };
    for (const record of [announcing, inserted]) {
      expect(matchesPattern(record, pattern)).toBe(true);
      expect(outboxOf(record)).toBeDefined();
    }
    for (const record of [quiet, removed, numeric]) {
      expect(matchesPattern(record, pattern)).toBe(false);
      expect(outboxOf(record)).toBeUndefined();
    }
  });
});

describe('the dead-letter queue', () => {
  it('is encrypted, keeps batches two weeks and refuses anything but TLS', () => {
    const { deadLetters } = ids(full);
    expect(propertiesOf(full, 'AWS::SQS::Queue', '/Outbox/DeadLetters/Resource')).toEqual({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 60 * 60,
    });
    expect(propertiesOf(full, 'AWS::SQS::QueuePolicy', '/Outbox/DeadLetters/Policy/Resource')).toEqual({
      Queues: [{ Ref: deadLetters }],
      PolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Deny',
            Principal: { AWS: '*' },
            Action: 'sqs:*',
            Resource: { 'Fn::GetAtt': [deadLetters, 'Arn'] },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          },
        ],
      },
    });
  });

  it('alarms on its first message, to the configured topic', () => {
    const { deadLetters } = ids(full);
    const alarm = propertiesOf(full, 'AWS::CloudWatch::Alarm', '/Observability/outbox-dead-letters/Resource');
    expect(alarm).toMatchObject({
      AlarmName: 'cairn-test-outbox-dead-letters',
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetters, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [FULL_CONTEXT.alarmTopicArn],
    });
    expect(alarm.AlarmDescription).toEqual(expect.stringContaining('outbox'));
  });
});

describe('the redrive', () => {
  it('invokes the Outbox Lambda on a schedule, every five minutes, an invocation refused retried within the period', () => {
    const { relay } = ids(full);
    const targetDeadLetters = logicalIdAt(full, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    expect(REDRIVE_EVERY_SECONDS).toBe(300);
    expect(propertiesOf(full, 'AWS::Events::Rule', '/Outbox/Redrive/Resource')).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [relay, 'Arn'] },
          Id: expect.any(String),
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 240 },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [targetDeadLetters, 'Arn'] } },
        },
      ],
    });
    // EventBridge may invoke the function for that rule alone.
    full.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [relay, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [logicalIdAt(full, 'AWS::Events::Rule', '/Outbox/Redrive/Resource'), 'Arn'] },
    });
  });

  it('hides a message it took longer than the Outbox Lambda may run', () => {
    const timeout = propertiesOf(full, 'AWS::Lambda::Function', '/Functions/Outbox/Resource').Timeout as number;
    expect(REDRIVE_HIDE_SECONDS).toBeGreaterThan(timeout);
  });

  it('is the only reader of the dead-letter queue and of the table’s stream', () => {
    const { deadLetters, policy } = ids(full);
    const reading = (action: string, resource: string) =>
      statementsOf(full)
        .filter(({ statement }) => [statement.Action].flat().includes(action))
        .filter(({ statement }) => JSON.stringify(statement.Resource).includes(resource))
        .map(({ owner }) => owner);
    expect(reading('sqs:ReceiveMessage', deadLetters)).toEqual([policy]);
    expect(reading('sqs:DeleteMessage', deadLetters)).toEqual([policy]);
    expect(reading('dynamodb:GetRecords', 'StreamArn')).toEqual([policy]);
    expect(reading('dynamodb:GetShardIterator', 'StreamArn')).toEqual([policy]);
  });
});

describe('the stream’s iterator age', () => {
  it('alarms when the relay is 15 minutes behind the stream, to the configured topic', () => {
    const { relay } = ids(full);
    expect(OUTBOX_ITERATOR_AGE_ALARM_MS).toBe(15 * 60_000);
    expect(propertiesOf(full, 'AWS::CloudWatch::Alarm', '/Observability/outbox-iterator-age/Resource')).toMatchObject({
      AlarmName: 'cairn-test-outbox-iterator-age',
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: relay } }],
      Statistic: 'Maximum',
      Threshold: OUTBOX_ITERATOR_AGE_ALARM_MS,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [FULL_CONTEXT.alarmTopicArn],
    });
  });
});

describe('the Outbox Lambda', () => {
  it('reads only its table and bus names and its dead-letter queue’s URL (and the shared observability settings)', () => {
    const { table, bus, deadLetters } = ids(full);
    expect(propertiesOf(full, 'AWS::Lambda::Function', '/Functions/Outbox/Resource')).toMatchObject({
      Environment: {
        Variables: {
          CAIRN_TABLE_NAME: { Ref: table },
          CAIRN_EVENT_BUS_NAME: { Ref: bus },
          CAIRN_OUTBOX_DEAD_LETTERS_URL: { Ref: deadLetters },
          POWERTOOLS_SERVICE_NAME: 'cairn-test',
          POWERTOOLS_METRICS_NAMESPACE: 'Cairn',
          NODE_OPTIONS: '--enable-source-maps',
        },
      },
      Timeout: 60,
      MemorySize: 512,
    });
    const variables = (
      propertiesOf(full, 'AWS::Lambda::Function', '/Functions/Outbox/Resource').Environment as {
        Variables: Record<string, unknown>;
      }
    ).Variables;
    expect(Object.keys(variables).sort()).toEqual([
      'CAIRN_EVENT_BUS_NAME',
      'CAIRN_OUTBOX_DEAD_LETTERS_URL',
      'CAIRN_TABLE_NAME',
      'NODE_OPTIONS',
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_SERVICE_NAME',
    ]);
  });

  it('may write its logs and traces, read the stream, write the audit log, publish, dead-letter and redrive: nothing else', () => {
    const { table, bus, logs, deadLetters, policy } = ids(full);
    const statements: PolicyStatementJson[] = statementsOf(full)
      .filter(({ owner }) => owner === policy)
      .map(({ statement }) => statement);
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logs, 'Arn'] },
      },
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
      // The audit log (recordEvents) and the events an announcement too large for its item kept out of line
      // (restoreAnnouncements), on the table alone (no index).
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
      },
      // What an expired run left: found by Query, its run key deleted while still the run's.
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query', 'dynamodb:DeleteItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
      },
      { Effect: 'Allow', Action: 'events:PutEvents', Resource: { 'Fn::GetAtt': [bus, 'Arn'] } },
      // The event source mapping's on-failure destination, sent to with the function's role.
      {
        Effect: 'Allow',
        Action: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        Resource: { 'Fn::GetAtt': [deadLetters, 'Arn'] },
      },
      // CDK's DynamoEventSource grants: ListStreams has no IAM resource type; the reads name the stream.
      { Effect: 'Allow', Action: 'dynamodb:ListStreams', Resource: '*' },
      {
        Effect: 'Allow',
        Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        Resource: { 'Fn::GetAtt': [table, 'StreamArn'] },
      },
      // The redrive: it takes the on-failure queue's messages and deletes each once its batch is relayed.
      {
        Effect: 'Allow',
        Action: [
          'sqs:ReceiveMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:GetQueueUrl',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
        ],
        Resource: { 'Fn::GetAtt': [deadLetters, 'Arn'] },
      },
    ]);
  });

  it('has its errors alarmed like every function', () => {
    const { relay } = ids(full);
    full.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'cairn-test-Outbox-errors',
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: relay } }],
      Threshold: 3,
      AlarmActions: Match.anyValue(),
    });
  });
});
