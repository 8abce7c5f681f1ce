/**
 * Approval notifications, deployed (context `notifyUrls`): the notifier Lambda (functions/notifier.ts) on the bus
 * through NOTIFY_RULE, its Standard Webhooks signing secret `cairn/<stage>/notify` in Secrets Manager — readable by
 * this function alone — and its reminders: EventBridge Scheduler one-shot schedules in its own group, which invoke
 * it through a role only Scheduler can assume. It reads approvals and writes only its own idempotency records.
 */
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { GSI1_NAME } from '../../shared/adapters/aws/table-layout.ts';
import { NOTIFIER_TIMEOUT_SECONDS } from '../../shared/config/defaults.ts';
import { NOTIFY_RULE } from '../../shared/events/bus-rules.ts';
import type { CairnConfig } from './config.ts';
import type { CairnEvents } from './events.ts';
import { LAMBDA_RUNTIME, TABLE_READ_ACTIONS } from './functions.ts';

export { NOTIFIER_TIMEOUT_SECONDS };
export const notifySecretName = (stage: string): string => `cairn/${stage}/notify`;

export interface CairnNotifierProps {
  readonly config: Pick<CairnConfig, 'stage' | 'notifyUrls' | 'logRetentionDays'>;
  readonly table: ITable;
  readonly events: CairnEvents;
  /** The console's URL, for the notifications' deep links. */
  readonly consoleUrl: string;
}

export class CairnNotifier extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly secret: Secret;
  /** The role EventBridge Scheduler assumes to invoke the notifier for a reminder. */
  readonly reminderRole: Role;
  readonly scheduleGroup: CfnScheduleGroup;

  constructor(scope: Construct, id: string, props: CairnNotifierProps) {
    super(scope, id);
    const { config } = props;
    const stack = Stack.of(this);
    const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

    this.secret = new Secret(this, 'Secret', {
      secretName: notifySecretName(config.stage),
      description: 'Standard Webhooks signing secret of approval notifications (give it to the receivers)',
      // Letters and digits: valid base64, 24 bytes; used as whsec_<value> (the prefix is optional to receivers).
      generateSecretString: { passwordLength: 32, excludePunctuation: true, includeSpace: false },
    });
    this.scheduleGroup = new CfnScheduleGroup(this, 'Reminders', { name: `cairn-${config.stage}-notify` });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `cairn ${config.stage}: the Notifier Lambda`,
    });
    const logGroup = new LogGroup(this, 'Logs', {
      retention: config.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    logGroup.grantWrite(this.role);
    this.reminderRole = new Role(this, 'ReminderRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      description: `cairn ${config.stage}: EventBridge Scheduler invokes the notifier for a reminder`,
    });

    this.function = new NodejsFunction(this, 'Notifier', {
      entry: fileURLToPath(new URL('../../functions/notifier.ts', import.meta.url)),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.seconds(NOTIFIER_TIMEOUT_SECONDS),
      role: this.role,
      logGroup,
      tracing: Tracing.ACTIVE,
      environment: {
        CAIRN_TABLE_NAME: props.table.tableName,
        CAIRN_NOTIFY_URL: config.notifyUrls.join(','),
        CAIRN_NOTIFY_SECRET_ARN: this.secret.secretArn,
        CAIRN_CONSOLE_URL: props.consoleUrl,
        CAIRN_NOTIFY_SCHEDULE_GROUP: this.scheduleGroup.ref,
        CAIRN_NOTIFY_SCHEDULER_ROLE_ARN: this.reminderRole.roleArn,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        externalModules: [],
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });

    // The secret: this function alone.
    this.secret.grantRead(this.function);
    // Approvals (read) and its own memory of what it sent (idempotency records: put, update, delete).
    const tableArn = props.table.tableArn;
    this.role.addToPolicy(
      new PolicyStatement({
        actions: [...TABLE_READ_ACTIONS],
        resources: [tableArn, `${tableArn}/index/${GSI1_NAME}`],
      }),
    );
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [tableArn],
      }),
    );
    // Reminders: schedules in its own group, with the reminder role passed to Scheduler and nothing else.
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['scheduler:CreateSchedule'],
        resources: [
          stack.formatArn({
            service: 'scheduler',
            resource: 'schedule',
            resourceName: `${this.scheduleGroup.ref}/*`,
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ],
      }),
    );
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.reminderRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    this.function.grantInvoke(this.reminderRole);
    props.events.addRule(NOTIFY_RULE, this.function);
  }
}
