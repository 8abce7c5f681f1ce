/**
 * Alarms and one CloudWatch dashboard: the engine's own metrics (EMF from the Lambdas, see shared/ports/metrics.ts)
 * per capability, the state machines, the Lambdas, the API, the table, the dead-letter queues (the event targets',
 * the outbox relay's, the async failures', the runs' mailbox's) and the outbox's redrive and iterator age. Every
 * alarm goes to the SNS topic named in context, when there is one.
 */
import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  type Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRIC_NAMES } from '../../shared/ports/metrics.ts';
import type { FunctionKey } from './state-names.ts';

const PERIOD = Duration.minutes(5);
/** The table stream's iterator age (milliseconds) at which the outbox Lambda is alarmed on as behind. */
export const OUTBOX_ITERATOR_AGE_ALARM_MS = 15 * 60_000;

export interface CairnObservabilityProps {
  readonly stage: string;
  /** The Powertools service name the Lambdas emit their metrics under (a dimension). */
  readonly serviceName: string;
  readonly namespace: string;
  readonly machines: { readonly run: StateMachine; readonly step: StateMachine };
  readonly functions: Readonly<Record<FunctionKey, IFunction>>;
  readonly httpApi: HttpApi;
  readonly table: ITable;
  readonly deadLetters: IQueue;
  /** Stream batches the outbox relay could not deliver: announced events that have not reached the bus. */
  readonly outboxDeadLetters: IQueue;
  /** Events an asynchronously invoked function (replanner, invalidator) failed after Lambda's retries. */
  readonly asyncFailures: IQueue;
  /** Letters of the runs' mailbox the decider failed on every receive: a run's command that was not decided. */
  readonly mailboxDeadLetters: IQueue;
  readonly alarmTopicArn?: string;
}

export class CairnObservability extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: CairnObservabilityProps) {
    super(scope, id);
    const { machines, functions } = props;
    const topic = props.alarmTopicArn ? Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined;
    const alarm = (name: string, metric: IMetric, threshold: number, description: string): Alarm => {
      const created = new Alarm(this, name, {
        alarmName: `cairn-${props.stage}-${name}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (topic) created.addAlarmAction(new SnsAction(topic));
      this.alarms.push(created);
      return created;
    };

    for (const [kind, machine] of Object.entries(machines)) {
      alarm(
        `${kind}-executions-failed`,
        machine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
        1,
        `A ${kind} state machine execution failed: an unexpected path (every known failure is caught in the ASL).`,
      );
      alarm(
        `${kind}-executions-timed-out`,
        machine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
        1,
        `A ${kind} state machine execution timed out.`,
      );
    }
    alarm(
      'event-dead-letters',
      props.deadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
      'An EventBridge rule target could not take an event after its retries: it waits in the dead-letter queue.',
    );
    alarm(
      'outbox-dead-letters',
      props.outboxDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
      'The outbox relay gave up on a batch of the table stream: the redrive relays it within minutes; one that stays is past the stream’s 24 hours or unreadable (metric OutboxDeadLettersStuck, docs/deploy.md).',
    );
    // The stream keeps a record 24 hours: a relay this far behind is failing or throttled, with most of a day left
    // to act before the stream drops what it has not delivered.
    alarm(
      'outbox-iterator-age',
      functions.Outbox.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' }),
      OUTBOX_ITERATOR_AGE_ALARM_MS,
      'The outbox relay is more than 15 minutes behind the table stream (which keeps records 24 hours).',
    );
    alarm(
      'async-failures',
      props.asyncFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
      'The replanner or the invalidator failed an event after Lambda’s async retries: it waits in the queue.',
    );
    alarm(
      'mailbox-dead-letters',
      props.mailboxDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      1,
      'The decider failed a run’s command on every receive: it waits in the mailbox’s dead-letter queue, undecided.',
    );
    alarm(
      'api-5xx',
      props.httpApi.metricServerError({ period: PERIOD, statistic: 'Sum' }),
      5,
      'The API answered with server errors.',
    );
    for (const [key, fn] of Object.entries(functions)) {
      alarm(
        `${key}-errors`,
        fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        3,
        `The ${key} Lambda threw 3 or more times in 5 minutes (the state machines retry or catch task errors; the API answers 500).`,
      );
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `cairn-${props.stage}` });
    // A SEARCH finds every dimension value (each capability, each approval kind) without listing them here.
    const engine = (metric: string, stat: string, label?: string, dimensions = ['capability']): MathExpression =>
      new MathExpression({
        expression: `SEARCH('{${[props.namespace, ...dimensions, 'service'].join(',')}} service="${props.serviceName}" MetricName="${metric}"', '${stat}', ${PERIOD.toSeconds()})`,
        ...(label === undefined ? {} : { label }),
        period: PERIOD,
      });
    const graph = (title: string, left: IMetric[], width = 6): GraphWidget =>
      new GraphWidget({ title, left, width, height: 6 });
    const perMachine = (pick: (m: StateMachine) => Metric): IMetric[] =>
      Object.entries(machines).map(([kind, m]) => pick(m).with({ label: kind, period: PERIOD, statistic: 'Sum' }));
    const perFunction = (pick: (fn: IFunction) => Metric, statistic: string): IMetric[] =>
      Object.entries(functions).map(([key, fn]) => pick(fn).with({ label: key, period: PERIOD, statistic }));

    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# cairn ${props.stage}\nEngine metrics per capability (EMF, namespace \`${props.namespace}\`), then the AWS services under them.`,
        width: 18,
        height: 2,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 6, height: 6 }),
    );
    this.dashboard.addWidgets(
      graph('Steps succeeded', [engine(METRIC_NAMES.stepsSucceeded, 'Sum')]),
      graph('Steps failed', [engine(METRIC_NAMES.stepsFailed, 'Sum')]),
      graph('Steps retried', [engine(METRIC_NAMES.stepsRetried, 'Sum')]),
      graph('Steps blocked', [engine(METRIC_NAMES.stepsBlocked, 'Sum')]),
    );
    this.dashboard.addWidgets(
      graph('Step duration p90 (ms)', [engine(METRIC_NAMES.stepDuration, 'p90', undefined, ['capability', 'outcome'])]),
      graph('Capability call p90 (ms)', [
        engine(METRIC_NAMES.capabilityCallDuration, 'p90', undefined, ['binding', 'capability']),
      ]),
      graph('Approval wait (ms)', [
        engine(METRIC_NAMES.approvalWait, 'Average', undefined, ['decision', 'kind']),
        engine(METRIC_NAMES.approvalWait, 'Maximum', undefined, ['decision', 'kind']),
      ]),
      graph('Replans and invalidated steps', [
        engine(METRIC_NAMES.replans, 'Sum', 'replans', []),
        engine(METRIC_NAMES.invalidations, 'Sum', 'invalidated', []),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        'Executions started',
        perMachine((m) => m.metricStarted()),
      ),
      graph(
        'Executions failed',
        perMachine((m) => m.metricFailed()),
      ),
      graph(
        'Executions timed out',
        perMachine((m) => m.metricTimedOut()),
      ),
      graph('Dead letters', [
        props.deadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'event targets' }),
        props.outboxDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'outbox' }),
        props.asyncFailures.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'async failures' }),
        props.mailboxDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, label: 'mailbox' }),
      ]),
    );
    this.dashboard.addWidgets(
      graph('Outbox redrive', [
        engine(METRIC_NAMES.outboxRedriven, 'Sum', 'batches redriven', []),
        engine(METRIC_NAMES.outboxDeadLettersStuck, 'Sum', undefined, ['reason']),
      ]),
      graph('Outbox iterator age (ms)', [
        functions.Outbox.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum', label: 'outbox' }),
      ]),
    );
    this.dashboard.addWidgets(
      graph(
        'Lambda invocations',
        perFunction((fn) => fn.metricInvocations(), 'Sum'),
      ),
      graph(
        'Lambda errors',
        perFunction((fn) => fn.metricErrors(), 'Sum'),
      ),
      graph(
        'Lambda duration p90 (ms)',
        perFunction((fn) => fn.metricDuration(), 'p90'),
      ),
      graph(
        'Lambda throttles',
        perFunction((fn) => fn.metricThrottles(), 'Sum'),
      ),
    );
    this.dashboard.addWidgets(
      graph('API requests and errors', [
        props.httpApi.metricCount({ period: PERIOD, statistic: 'Sum', label: 'requests' }),
        props.httpApi.metricClientError({ period: PERIOD, statistic: 'Sum', label: '4xx' }),
        props.httpApi.metricServerError({ period: PERIOD, statistic: 'Sum', label: '5xx' }),
      ]),
      graph('API latency p90 (ms)', [props.httpApi.metricLatency({ period: PERIOD, statistic: 'p90' })]),
      graph('DynamoDB capacity consumed', [
        props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'read units' }),
        props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'write units' }),
      ]),
      graph('DynamoDB throttled requests', [
        props.table.metricThrottledRequestsForOperations({ period: PERIOD, statistic: 'Sum' }),
      ]),
    );
  }
}
