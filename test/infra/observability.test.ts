/**
 * Alarms and the dashboard: failed and timed-out executions of both machines alarm (to the SNS topic when one is
 * configured), dead letters and errors alarm, and the dashboard shows every engine metric the Lambdas emit.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_KEYS } from '../../infra/constructs/state-names.ts';
import { METRIC_NAMES } from '../../shared/ports/metrics.ts';
import { FULL_CONTEXT, logicalIdAt, synthStack } from './synth-stack.ts';

let plain: Template;
let full: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
});

type AlarmProps = {
  AlarmName: string;
  MetricName: string;
  Namespace: string;
  Dimensions: { Name: string; Value: unknown }[];
  Threshold: number;
  AlarmActions?: unknown[];
};
const alarms = (template: Template): AlarmProps[] =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as AlarmProps);

describe('alarms', () => {
  it('fire on a failed and on a timed-out execution of either machine', () => {
    for (const machine of ['RunMachine', 'StepMachine']) {
      const id = logicalIdAt(full, 'AWS::StepFunctions::StateMachine', `/StateMachines/${machine}/Resource`);
      for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
        const found = alarms(full).filter(
          (a) =>
            a.Namespace === 'AWS/States' &&
            a.MetricName === metric &&
            JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'StateMachineArn', Value: { Ref: id } }]),
        );
        expect(found, `${machine} ${metric}`).toHaveLength(1);
        expect(found[0]?.Threshold).toBe(1);
      }
    }
  });

  it('watch every dead-letter queue (event targets, outbox relay, async failures, mailbox) and every function’s errors', () => {
    const queue = (path: string) => ({
      Name: 'QueueName',
      Value: { 'Fn::GetAtt': [logicalIdAt(full, 'AWS::SQS::Queue', `${path}/Resource`), 'QueueName'] },
    });
    const deadLetters = alarms(full)
      .filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible')
      .map((a) => ({
        AlarmName: a.AlarmName,
        Namespace: a.Namespace,
        Dimensions: a.Dimensions,
        Threshold: a.Threshold,
      }))
      .sort((a, b) => a.AlarmName.localeCompare(b.AlarmName));
    expect(deadLetters).toEqual([
      {
        AlarmName: 'cairn-test-async-failures',
        Namespace: 'AWS/SQS',
        Dimensions: [queue('/Events/AsyncFailures')],
        Threshold: 1,
      },
      {
        AlarmName: 'cairn-test-event-dead-letters',
        Namespace: 'AWS/SQS',
        Dimensions: [queue('/Events/TargetDeadLetters')],
        Threshold: 1,
      },
      {
        AlarmName: 'cairn-test-mailbox-dead-letters',
        Namespace: 'AWS/SQS',
        Dimensions: [queue('/Mailbox/DeadLetters')],
        Threshold: 1,
      },
      {
        AlarmName: 'cairn-test-outbox-dead-letters',
        Namespace: 'AWS/SQS',
        Dimensions: [queue('/Outbox/DeadLetters')],
        Threshold: 1,
      },
    ]);
    expect(alarms(full).filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Errors')).toHaveLength(
      FUNCTION_KEYS.length,
    );
  });

  it('notify the configured topic, and nobody when none is configured', () => {
    for (const alarm of alarms(full)) expect(alarm.AlarmActions).toEqual([FULL_CONTEXT.alarmTopicArn]);
    for (const alarm of alarms(plain)) expect(alarm.AlarmActions).toBeUndefined();
  });
});

describe('dashboard', () => {
  it('shows every engine metric of this stage and every alarm', () => {
    const dashboard = Object.values(full.findResources('AWS::CloudWatch::Dashboard'))[0];
    const body = JSON.stringify(dashboard?.Properties);
    expect(body).toContain('cairn-test');
    for (const name of Object.values(METRIC_NAMES)) expect(body, name).toContain(`MetricName=\\\\\\"${name}\\\\\\"`);
    expect(body).toContain('service=\\\\\\"cairn-test\\\\\\"');
    const alarmIds = Object.keys(full.findResources('AWS::CloudWatch::Alarm'));
    for (const id of alarmIds) expect(body, id).toContain(id);
    // Every dead-letter queue is graphed, not only alarmed.
    for (const path of [
      '/Events/TargetDeadLetters/Resource',
      '/Outbox/DeadLetters/Resource',
      '/Events/AsyncFailures/Resource',
      '/Mailbox/DeadLetters/Resource',
    ]) {
      const queue = logicalIdAt(full, 'AWS::SQS::Queue', path);
      expect(body, path).toContain(`{"Fn::GetAtt":["${queue}","QueueName"]}`);
    }
  });
});
