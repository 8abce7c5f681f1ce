/**
 * The cairn stack: the table, the event bus, the runs' mailbox (an SQS FIFO queue read by the decider Lambda, and
 * the timers' schedule group), the Lambdas, the two state machines, the HTTP API (JWT-authorized) in front of the
 * API Lambda, and the alarms and dashboard over all of it. Deployment configuration comes from CDK
 * context or stack props (constructs/config.ts), with the same names the Lambdas read from their environment.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { CairnApi } from './constructs/api.ts';
import type { CairnConfig } from './constructs/config.ts';
import { CairnEvents } from './constructs/events.ts';
import { FUNCTION_TIMEOUT_SECONDS, Functions, METRICS_NAMESPACE, serviceName } from './constructs/functions.ts';
import { CairnMailbox } from './constructs/mailbox.ts';
import { CairnNotifier } from './constructs/notifier.ts';
import { CairnObservability } from './constructs/observability.ts';
import { CairnOutbox } from './constructs/outbox.ts';
import { machineRefs, StateMachines } from './constructs/state-machines.ts';
import { CairnTable } from './constructs/table.ts';

export { type CairnConfig, configFromContext, DEFAULT_CONFIG, stackName } from './constructs/config.ts';

export interface CairnStackProps extends StackProps {
  readonly config: CairnConfig;
}

export class CairnStack extends Stack {
  readonly config: CairnConfig;
  readonly table: CairnTable;
  readonly events: CairnEvents;
  readonly mailbox: CairnMailbox;
  readonly functions: Functions;
  readonly outbox: CairnOutbox;
  readonly machines: StateMachines;
  readonly api: CairnApi;
  readonly observability: CairnObservability;
  /** Approval notifications (context notifyUrls); absent without them. */
  readonly notifier?: CairnNotifier;

  constructor(scope: Construct, id: string, props: CairnStackProps) {
    super(scope, id, props);
    const { config } = props;
    this.config = config;
    this.table = new CairnTable(this, 'Store', { retain: config.retainData });
    this.events = new CairnEvents(this, 'Events', {
      stage: config.stage,
      archiveRetentionDays: config.archiveRetentionDays,
    });
    // The runs' mailbox: every command to a run goes through it to the run's decider, one batch of a run at a time.
    this.mailbox = new CairnMailbox(this, 'Mailbox', {
      stage: config.stage,
      consumerTimeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS.Decider),
    });
    const refs = machineRefs(this, config.stage);
    this.functions = new Functions(this, 'Functions', {
      config,
      table: this.table.table,
      bus: this.events.bus,
      mailbox: this.mailbox,
      machines: refs,
    });
    this.mailbox.deliverTo(this.functions.byKey.Decider);
    this.machines = new StateMachines(this, 'StateMachines', {
      functions: this.functions.byKey,
      machines: refs,
      logRetentionDays: config.logRetentionDays,
    });
    // The rules that drive cairn (shared/events/bus-rules.ts), each with its retry policy and dead-letter queue.
    this.events.addBusRules({
      Invalidator: this.functions.byKey.Invalidator,
      Replanner: this.functions.byKey.Replanner,
    });
    // The outbox: the table's change stream → the relay → the bus and the audit log; and its redrive's schedule.
    this.outbox = new CairnOutbox(this, 'Outbox', {
      table: this.table.table,
      relay: this.functions.byKey.Outbox,
      targetDeadLetters: this.events.deadLetters,
    });
    // The webhook route runs in the API function for now (its Hono app serves `POST /webhooks/{source}`).
    this.api = new CairnApi(this, 'Api', {
      config,
      handler: this.functions.byKey.Api,
      webhookHandler: this.functions.byKey.Api,
    });
    if (config.notifyUrls.length > 0)
      this.notifier = new CairnNotifier(this, 'Notifier', {
        config,
        table: this.table.table,
        events: this.events,
        consoleUrl: this.api.consoleUrl,
      });
    this.observability = new CairnObservability(this, 'Observability', {
      stage: config.stage,
      serviceName: serviceName(config.stage),
      namespace: METRICS_NAMESPACE,
      machines: { run: this.machines.run, step: this.machines.step },
      functions: this.functions.byKey,
      httpApi: this.api.httpApi,
      table: this.table.table,
      deadLetters: this.events.deadLetters,
      outboxDeadLetters: this.outbox.deadLetters,
      mailboxDeadLetters: this.mailbox.deadLetters,
      asyncFailures: this.events.asyncFailures,
      ...(config.alarmTopicArn === undefined ? {} : { alarmTopicArn: config.alarmTopicArn }),
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'ConsoleUrl', { value: this.api.consoleUrl });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'EventBusName', { value: this.events.bus.eventBusName });
    new CfnOutput(this, 'RunMachineArn', { value: this.machines.run.stateMachineArn });
    new CfnOutput(this, 'StepMachineArn', { value: this.machines.step.stateMachineArn });
    new CfnOutput(this, 'MailboxQueueUrl', { value: this.mailbox.queue.queueUrl });
    new CfnOutput(this, 'MailboxDeadLettersUrl', { value: this.mailbox.deadLetters.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName });
    if (this.api.userPool) {
      new CfnOutput(this, 'UserPoolId', { value: this.api.userPool.userPool.userPoolId });
      new CfnOutput(this, 'UserPoolClientId', { value: this.api.userPool.client.userPoolClientId });
    }
    if (this.notifier)
      new CfnOutput(this, 'NotifySecret', {
        description: "Secrets Manager name of the approval notifications' signing secret (whsec_<value>)",
        value: this.notifier.secret.secretName,
      });
    for (const [source, secret] of Object.entries(this.api.webhookSecrets)) {
      new CfnOutput(this, `WebhookSecret${source.replace(/[^A-Za-z0-9]/g, '')}`, {
        description: `Secrets Manager name of the ${source} webhook's signing secret`,
        value: secret.secretName,
      });
    }
  }
}
