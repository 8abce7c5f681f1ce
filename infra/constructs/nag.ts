/**
 * cdk-nag's AwsSolutions checks over the stack, and the few findings that are accepted, each with the reason a
 * reviewer needs. Imported by the CDK app and the infra tests only: the embedded runtime synthesizes the stack
 * without it (cdk-nag is a dev dependency).
 */
import { Aspects, type IAspect } from 'aws-cdk-lib';
import { AwsSolutionsChecks, type INagLogger, NagSuppressions } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { CairnStack } from '../stack.ts';
import { EXECUTION_CALLS, TIMER_SCHEDULERS } from './execution-grants.ts';
import type { FunctionKey } from './state-names.ts';

export interface Suppression {
  readonly id: string;
  readonly reason: string;
  readonly appliesTo?: readonly (string | { readonly regex: string })[];
}

const XRAY_AND_LOG_DELIVERY =
  'X-Ray (xray:PutTraceSegments, PutTelemetryRecords, GetSampling*) and CloudWatch Logs vended log delivery ' +
  '(logs:CreateLogDelivery and friends) accept no resource ARN, so these statements can only name "*"; the actions ' +
  'themselves are listed one by one (no wildcard actions).';

/** Findings accepted, keyed by what they are about; `apply` attaches each to the constructs it concerns. */
export const SUPPRESSIONS = {
  lambdaTracing: {
    id: 'AwsSolutions-IAM5',
    reason: `Active tracing: ${XRAY_AND_LOG_DELIVERY}`,
    appliesTo: ['Resource::*'],
  },
  stateMachineRole: {
    id: 'AwsSolutions-IAM5',
    reason:
      `Logging and tracing of the state machine: ${XRAY_AND_LOG_DELIVERY} The "<function ARN>:*" resources are the ` +
      'qualified ARNs (versions, aliases) of the stack’s own task functions, granted by the LambdaInvoke task.',
    appliesTo: ['Resource::*', { regex: '/^Resource::<Functions[A-Za-z0-9]+\\.Arn>:\\*$/g' }],
  },
  executions: {
    id: 'AwsSolutions-IAM5',
    reason:
      'Stop/Describe of executions of this stack’s own two state machines: execution ARNs end in a name chosen per ' +
      'run and step at start time, so the machine-scoped "execution:<machine>:*" is the narrowest possible ARN.',
    appliesTo: [
      { regex: '/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:.+:\\*$/g' },
    ],
  },
  timerSchedules: {
    id: 'AwsSolutions-IAM5',
    reason:
      'scheduler:CreateSchedule on the schedules of cairn’s own schedule group of this stage, ' +
      '"schedule/cairn-<stage>/*": a timer’s schedule is named at run time (a hash of its run and name), so the ' +
      'group is the narrowest scope; the group holds only the decider’s timers, each targeting the mailbox queue ' +
      'with the scheduler role, which may only send to that queue.',
    appliesTo: [
      {
        regex:
          '/^Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\\/cairn-[^/]+\\/\\*$/g',
      },
    ],
  },
  crossRegionModel: {
    id: 'AwsSolutions-IAM5',
    reason:
      'A cross-region inference profile serves the configured model from any region of its geography, so the ' +
      'foundation-model ARN needs a region wildcard; the statement names one model and holds only under the ' +
      'condition bedrock:InferenceProfileArn = the configured profile in this region.',
    appliesTo: [{ regex: '/^Resource::arn:<AWS::Partition>:bedrock:\\*::foundation-model\\/.+$/g' }],
  },
  webhookRoute: {
    id: 'AwsSolutions-APIG4',
    reason:
      'Webhook senders (GitHub, CI systems…) cannot obtain a JWT: the function verifies an HMAC-SHA256 signature ' +
      'over the raw body with the source’s secret from Secrets Manager, a timestamp window and replay memory, and ' +
      'answers 401 to anything else. The route is POST-only and throttled with the stage.',
  },
  contractRoute: {
    id: 'AwsSolutions-APIG4',
    reason:
      'GET /openapi.json is the API’s OpenAPI document, the same for every caller and holding no data: clients and ' +
      'tools read it before they have a token. The function serves it on that exact path only.',
  },
  consoleRoute: {
    id: 'AwsSolutions-APIG4',
    reason:
      'The console’s static page (HTML, JS, CSS) must load in a browser before anyone has signed in; it holds no ' +
      'data. The Lambda serves only files it listed at start under /console/, and every data request the page makes ' +
      'goes to JWT-authorized routes.',
  },
  userPoolPlusTier: {
    id: 'AwsSolutions-COG8',
    reason:
      'The pool holds a few invited approvers (self sign-up off, TOTP MFA required, strong passwords): the Plus ' +
      'tier’s threat protection is priced per active user and is left as an opt-in; deployments with an outside ' +
      'OIDC issuer create no pool at all.',
  },
  webhookSecretRotation: {
    id: 'AwsSolutions-SMG4',
    reason:
      'A webhook signing secret is shared with the outside sender, which must be reconfigured in the same change: ' +
      'rotation is a manual, coordinated step (docs/deploy.md, Webhooks) that a rotation Lambda cannot do alone.',
  },
  deadLetterQueue: {
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is itself the dead-letter queue of the EventBridge rule targets; a DLQ of a DLQ would only move ' +
      'the same messages again. Its depth has an alarm.',
  },
  outboxStreamRead: {
    id: 'AwsSolutions-IAM5',
    reason:
      'The outbox relay reads the table’s change stream through its event source mapping: dynamodb:ListStreams ' +
      'defines no resource type in IAM, so it can only be granted on "*" (the stream reads DescribeStream, ' +
      'GetRecords and GetShardIterator name the table’s stream ARN). The same finding covers this function’s ' +
      `tracing statement: ${XRAY_AND_LOG_DELIVERY}`,
    appliesTo: ['Resource::*'],
  },
  outboxDeadLetterQueue: {
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is itself the on-failure destination of the outbox relay’s stream event source mapping (the ' +
      'coordinates of batches that failed every retry, to replay from the stream); a DLQ of a DLQ would only move ' +
      'the same records again. Its depth has an alarm.',
  },
  asyncFailureQueue: {
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is itself the on-failure destination of the asynchronously invoked functions (the replanner, the ' +
      'invalidator): it holds the invocation records of events they failed for good; a DLQ of a DLQ would only move ' +
      'the same records again. Its depth has an alarm.',
  },
} as const satisfies Record<string, Suppression>;

const add = (scope: IConstruct, ...suppressions: Suppression[]): void => {
  NagSuppressions.addResourceSuppressions(
    scope,
    suppressions.map((s) => ({ id: s.id, reason: s.reason, ...(s.appliesTo ? { appliesTo: [...s.appliesTo] } : {}) })),
    true,
  );
};

/** Attaches every accepted finding to exactly the constructs it is about. */
export function applyNagSuppressions(stack: CairnStack): void {
  const { roles } = stack.functions;
  // The Outbox role's one `Resource::*` finding is both its tracing and the stream listing: one reason for both.
  for (const [key, role] of Object.entries(roles)) if (key !== 'Outbox') add(role, SUPPRESSIONS.lambdaTracing);
  add(outboxPolicyOf(stack), SUPPRESSIONS.outboxStreamRead);
  // Exactly the roles that stop executions (the one call whose resource is every execution of a machine).
  for (const [key, calls] of Object.entries(EXECUTION_CALLS))
    if ((calls.stop?.length ?? 0) > 0) add(roles[key as FunctionKey], SUPPRESSIONS.executions);
  for (const role of [roles.Planner, roles.Api, roles.StepExecutor, roles.Replanner])
    add(role, SUPPRESSIONS.crossRegionModel);
  // Exactly the roles that schedule timers.
  for (const key of TIMER_SCHEDULERS) add(roles[key], SUPPRESSIONS.timerSchedules);
  for (const machine of [stack.machines.run, stack.machines.step]) add(machine, SUPPRESSIONS.stateMachineRole);
  for (const route of stack.api.publicRoutes.webhooks) add(route, SUPPRESSIONS.webhookRoute);
  for (const route of stack.api.publicRoutes.console) add(route, SUPPRESSIONS.consoleRoute);
  for (const route of stack.api.publicRoutes.contract) add(route, SUPPRESSIONS.contractRoute);
  if (stack.api.userPool) add(stack.api.userPool.userPool, SUPPRESSIONS.userPoolPlusTier);
  for (const secret of Object.values(stack.api.webhookSecrets)) add(secret, SUPPRESSIONS.webhookSecretRotation);
  add(stack.events.deadLetters, SUPPRESSIONS.deadLetterQueue);
  add(stack.outbox.deadLetters, SUPPRESSIONS.outboxDeadLetterQueue);
  add(stack.events.asyncFailures, SUPPRESSIONS.asyncFailureQueue);
}

/** The Outbox role's default policy, where CDK's DynamoEventSource puts the stream grants. */
function outboxPolicyOf(stack: CairnStack): IConstruct {
  const policy = stack.functions.roles.Outbox.node.tryFindChild('DefaultPolicy');
  if (policy === undefined) throw new Error('the Outbox role has no default policy: the stream grants are missing');
  return policy;
}

/** AwsSolutionsChecks on everything under `scope`, with the stack's accepted findings suppressed. */
export function addNagChecks(
  scope: IConstruct,
  stacks: readonly CairnStack[],
  loggers: readonly INagLogger[] = [],
): IAspect {
  const checks = new AwsSolutionsChecks({ verbose: true, additionalLoggers: [...loggers] });
  Aspects.of(scope).add(checks);
  for (const stack of stacks) applyNagSuppressions(stack);
  return checks;
}
