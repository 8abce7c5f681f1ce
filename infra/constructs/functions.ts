/**
 * One NodejsFunction per Lambda (arm64, the newest Node.js runtime, ESM bundles built by esbuild without Docker),
 * each with its own role, its own log group with a retention, X-Ray tracing, only the environment its handler
 * reads and only the grants it uses. The construct ids are the function keys the embedded runtime maps Task states
 * to.
 */
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { type IGrantable, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GSI1_NAME, STATUS_INDEX_NAME } from '../../shared/adapters/aws/table-layout.ts';
import { STEP_EXECUTOR_TIMEOUT_SECONDS } from '../../shared/config/defaults.ts';
import { deployedBindings } from './binding-secrets.ts';
import { bundleFilesEnvironment, commandHooksOf } from './bundle-files.ts';
import type { CairnConfig } from './config.ts';
import {
  EXECUTION_CALLS,
  FUNCTION_INVOKES,
  grantExecutions,
  INVOKED_FUNCTION_VARIABLE,
  MAILBOX_SENDERS,
  TIMER_SCHEDULERS,
} from './execution-grants.ts';
import type { CairnMailbox } from './mailbox.ts';
import { FUNCTION_KEYS, type FunctionKey } from './state-names.ts';

/** Lambda timeouts; the state machines give every Task a little more so the Lambda's own timeout reports first. */
export const FUNCTION_TIMEOUT_SECONDS: Readonly<Record<FunctionKey, number>> = {
  Planner: 300,
  Validator: 60,
  Coordinator: 60,
  // A step's budget.maxSeconds is validated against this (MAX_STEP_BUDGET_SECONDS): one attempt fits one invocation.
  StepExecutor: STEP_EXECUTOR_TIMEOUT_SECONDS,
  Api: 29,
  Invalidator: 120,
  // A replan may wait for the planning model (Bedrock), like the planner.
  Replanner: 300,
  Outbox: 60,
  // A batch of up to 10 letters: decide, one conditional write, project, perform the effects. Kept short: the
  // mailbox's visibility timeout is six times this, and a failed batch holds its run's later letters that long.
  Decider: 30,
};

export const MEMORY_MB: Readonly<Record<FunctionKey, number>> = {
  Planner: 1024,
  Validator: 512,
  Coordinator: 512,
  StepExecutor: 1024,
  Api: 1024,
  Invalidator: 512,
  Replanner: 1024,
  Outbox: 512,
  // Runs stay in memory between batches (the shell's copies): memory is what keeps a warm decider cheap.
  Decider: 1024,
};

const ENTRIES: Readonly<Record<FunctionKey, string>> = {
  Planner: 'planner.ts',
  Validator: 'validator.ts',
  Coordinator: 'coordinator.ts',
  StepExecutor: 'step-executor.ts',
  Api: 'api.ts',
  Invalidator: 'invalidator.ts',
  Replanner: 'replanner.ts',
  Outbox: 'outbox.ts',
  Decider: 'decider.ts',
};

/** The newest Node.js runtime this aws-cdk-lib knows (cdk-nag's L1 checks for exactly that). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;
export const BUNDLE_TARGET = 'node24';
export const METRICS_NAMESPACE = 'Cairn';
export const serviceName = (stage: string): string => `cairn-${stage}`;

/**
 * The DynamoDB API calls the store adapters make (shared/adapters/aws), and nothing else: a store change that uses
 * another call must add it here (test/infra checks the two lists against each other).
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

export interface MachineRef {
  readonly name: string;
  readonly arn: string;
}

export type FunctionsConfig = Pick<
  CairnConfig,
  | 'stage'
  | 'runDeadlineSeconds'
  | 'maxSteps'
  | 'maxDepth'
  | 'maxReplans'
  | 'maxRunningRunsPerTenant'
  | 'approvalTimeoutSeconds'
  | 'replanWatchSeconds'
  | 'modelId'
  | 'modelEndpoint'
  | 'bindings'
  | 'catalogFile'
  | 'logRetentionDays'
  | 'retentionDays'
  | 'plannerConcurrency'
  | 'executorConcurrency'
>;

export interface FunctionsProps {
  readonly config: FunctionsConfig;
  readonly table: ITable;
  readonly bus: IEventBus;
  /** The runs' mailbox: where commands are sent, and where the decider's timers are scheduled. */
  readonly mailbox: Pick<CairnMailbox, 'queue' | 'schedulerRole' | 'scheduleGroup' | 'grantSend' | 'grantTimers'>;
  /** Names and ARNs fixed before the machines exist: the machines reference the functions, not the other way. */
  readonly machines: { readonly run: MachineRef; readonly step: MachineRef };
}

export class Functions extends Construct {
  readonly byKey: Readonly<Record<FunctionKey, NodejsFunction>>;
  /** One role per function, nothing shared: a grant to one never reaches another. */
  readonly roles: Readonly<Record<FunctionKey, Role>>;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const { config } = props;
    const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
    const bundleFiles = {
      projectRoot,
      ...(config.catalogFile === undefined ? {} : { catalogFile: config.catalogFile }),
    };
    const environments = environmentsOf(props);
    const roles = {} as Record<FunctionKey, Role>;
    const make = (key: FunctionKey): NodejsFunction => {
      const role = new Role(this, `${key}Role`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `cairn ${config.stage}: the ${key} Lambda`,
      });
      roles[key] = role;
      const logGroup = new LogGroup(this, `${key}Logs`, {
        retention: config.logRetentionDays,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      logGroup.grantWrite(role);
      return new NodejsFunction(this, key, {
        entry: fileURLToPath(new URL(`../../functions/${ENTRIES[key]}`, import.meta.url)),
        handler: 'handler',
        projectRoot,
        depsLockFilePath: fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
        runtime: LAMBDA_RUNTIME,
        architecture: Architecture.ARM_64,
        memorySize: MEMORY_MB[key],
        timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS[key]),
        role,
        logGroup,
        tracing: Tracing.ACTIVE,
        environment: checkedEnvironment(key, { ...environments[key], ...bundleFilesEnvironment(key, bundleFiles) }),
        ...reservedConcurrency(key, config),
        bundling: {
          format: OutputFormat.ESM,
          target: BUNDLE_TARGET,
          mainFields: ['module', 'main'],
          minify: true,
          sourceMap: true,
          // Bundle the pinned AWS SDK too: the same client versions as in tests, not whatever the runtime ships.
          externalModules: [],
          banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
          // The console (API only) and the catalog file travel beside the module; see bundle-files.ts.
          commandHooks: commandHooksOf(key, bundleFiles),
        },
      });
    };
    this.byKey = Object.fromEntries(FUNCTION_KEYS.map((key) => [key, make(key)])) as Record<
      FunctionKey,
      NodejsFunction
    >;
    this.roles = roles;
    this.grant(props);
  }

  private grant(props: FunctionsProps): void {
    const { Planner, Validator, StepExecutor, Replanner, Outbox, Api } = this.byKey;
    const stack = Stack.of(this);
    // The table and its two indexes by name (no `index/*`); the validator only reads the run's candidate plan. The
    // decider commits a run's batches (`LOG#<version>` items), projects its records and writes the answers its
    // senders wait for (`REPLY#<id>` items, which the senders read back with GetItem).
    const tableResources = [
      props.table.tableArn,
      `${props.table.tableArn}/index/${GSI1_NAME}`,
      `${props.table.tableArn}/index/${STATUS_INDEX_NAME}`,
    ];
    const tableWriters: FunctionKey[] = [
      'Planner',
      'Coordinator',
      'StepExecutor',
      'Api',
      'Invalidator',
      'Replanner',
      'Decider',
    ];
    for (const key of tableWriters)
      allow(this.byKey[key], [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS], tableResources);
    allow(Validator, [...TABLE_READ_ACTIONS], tableResources);
    // Only the outbox relay publishes the engine's events (they travel with the writes that make the changes) and
    // writes the audit log (and reads back the events an announcement too large for its item kept out of line); the
    // API publishes what webhooks report (ResourceChanged), which no write carries.
    allow(Outbox, ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'], [props.table.tableArn]);
    // It also deletes what an expired run left (dynamo-retention.ts): the run's partitions are found by Query, its
    // run key deleted on condition that it is still the run's.
    allow(Outbox, ['dynamodb:Query', 'dynamodb:DeleteItem'], [props.table.tableArn]);
    for (const fn of [Outbox, Api]) props.bus.grantPutEventsTo(fn);

    // Step Functions: what each function's services call, from the one table (execution-grants.ts).
    for (const key of FUNCTION_KEYS) grantExecutions(stack, this.byKey[key], EXECUTION_CALLS[key], props.machines);

    // The runs' mailbox: whoever sends a run a command may send to the queue; the decider alone schedules timers
    // (one-time schedules that send to the queue as the scheduler role). Their variables: environmentsOf.
    for (const key of MAILBOX_SENDERS) props.mailbox.grantSend(this.byKey[key]);
    for (const key of TIMER_SCHEDULERS) props.mailbox.grantTimers(this.byKey[key]);

    // Planning jobs: the API invokes the planner and the replanner asynchronously, by the names it is given.
    for (const key of FUNCTION_KEYS) {
      for (const target of FUNCTION_INVOKES[key] ?? []) {
        const invoked = this.byKey[target];
        allow(this.byKey[key], ['lambda:InvokeFunction'], [invoked.functionArn]);
        const variable = INVOKED_FUNCTION_VARIABLE[target];
        if (variable !== undefined) this.byKey[key].addEnvironment(variable, invoked.functionName);
      }
    }

    const { modelId, bindings } = props.config;
    // The planner (the run's plan and the API's plan jobs) and the replanner (a failure's revision and a person's
    // replan job) ask the model; the API never does (`POST /plans` DIRECT calls no model).
    if (modelId !== undefined) for (const fn of [Planner, Replanner]) grantModelInvoke(fn, stack, [modelId]);
    // An OpenAI-compatible endpoint needs no grant, only its key: read by whoever plans, and by the step executor
    // for the agents bound to such endpoints.
    const plannerKey = props.config.modelEndpoint?.apiKeySecret;
    if (plannerKey !== undefined) for (const fn of [Planner, Replanner]) grantSecretRead(fn, stack, [plannerKey]);
    const targets = bindingTargets(bindings);
    // The secrets bindings read (headers, keys, MCP environments by reference): the step executor alone calls them.
    const secrets = bindings === undefined ? [] : deployedBindings(bindings).secrets;
    if (secrets.length > 0) grantSecretRead(StepExecutor, stack, secrets);
    if (targets.modelIds.length > 0) grantModelInvoke(StepExecutor, stack, targets.modelIds);
    if (targets.functionArns.length > 0) allow(StepExecutor, ['lambda:InvokeFunction'], targets.functionArns);
  }
}

function allow(
  grantee: IGrantable,
  actions: string[],
  resources: string[],
  conditions?: Record<string, Record<string, unknown>>,
): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }),
  );
}

/** The environment each handler reads (see the header of each functions/*.ts), and nothing else. */
function environmentsOf(props: FunctionsProps): Record<FunctionKey, Record<string, string>> {
  const own = ownEnvironmentsOf(props);
  // A sender of commands is told the queue's URL (shared/adapters/aws/sqs-mailbox.ts); whoever schedules timers,
  // its ARN and the role Scheduler sends with (scheduler-timers.ts).
  for (const key of MAILBOX_SENDERS) own[key].CAIRN_MAILBOX_URL = props.mailbox.queue.queueUrl;
  for (const key of TIMER_SCHEDULERS) {
    own[key].CAIRN_MAILBOX_ARN = props.mailbox.queue.queueArn;
    own[key].CAIRN_SCHEDULER_ROLE_ARN = props.mailbox.schedulerRole.roleArn;
    own[key].CAIRN_SCHEDULE_GROUP = props.mailbox.scheduleGroup.scheduleGroupName;
  }
  return own;
}

function ownEnvironmentsOf(props: FunctionsProps): Record<FunctionKey, Record<string, string>> {
  const { config, machines } = props;
  const common: Record<string, string> = {
    CAIRN_TABLE_NAME: props.table.tableName,
    POWERTOOLS_SERVICE_NAME: serviceName(config.stage),
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    NODE_OPTIONS: '--enable-source-maps',
  };
  const limits = { CAIRN_MAX_STEPS: String(config.maxSteps), CAIRN_MAX_DEPTH: String(config.maxDepth) };
  // Whoever writes a run's or an approval's item stamps its expiry with it (shared/adapters/aws/dynamo-codec.ts);
  // the validator only reads, and the outbox Lambda only deletes what expired.
  const retention = { CAIRN_RETENTION_DAYS: String(config.retentionDays) };
  const model: Record<string, string> = {
    ...(config.modelId === undefined ? {} : { CAIRN_MODEL_ID: config.modelId }),
    ...modelEndpointEnvironment(config.modelEndpoint),
  };
  // The API queues a tenant's runs over the bound, the decider frees a slot when a run ends (services/admission.ts).
  const admission: Record<string, string> =
    config.maxRunningRunsPerTenant === undefined
      ? {}
      : { CAIRN_MAX_RUNNING_RUNS_PER_TENANT: String(config.maxRunningRunsPerTenant) };
  const coordinator = {
    ...limits,
    ...retention,
    CAIRN_RUN_MACHINE_ARN: machines.run.arn,
    CAIRN_STEP_MACHINE_ARN: machines.step.arn,
    CAIRN_RUN_DEADLINE_SECONDS: String(config.runDeadlineSeconds),
    // The coordinator leaves a final failure to the replanner while replanning is on.
    CAIRN_MAX_REPLANS: String(config.maxReplans),
    ...runTimeouts(config),
  };
  return {
    Planner: { ...common, ...retention, ...limits, ...model },
    Validator: { ...common, ...limits },
    Coordinator: { ...common, ...coordinator },
    // RunStep takes a step from its claim to its dependents' start: the coordinator's settings and the bindings.
    StepExecutor: {
      ...common,
      ...coordinator,
      ...(config.bindings === undefined ? {} : { CAIRN_BINDINGS: JSON.stringify(config.bindings) }),
    },
    // The API runs the coordinator's cancelRun, the replanner's checks and the invalidator in process: their
    // settings too, and the bus, for the ResourceChanged events webhooks report. No model: its planning jobs run
    // in the planner and the replanner (FUNCTION_INVOKES adds their names).
    Api: { ...common, ...coordinator, ...admission, CAIRN_EVENT_BUS_NAME: props.bus.eventBusName },
    // The invalidator settles the runs it reopens with the coordinator's rules (limits, replans, deadline).
    Invalidator: { ...common, ...coordinator },
    Replanner: { ...common, ...coordinator, ...model },
    Outbox: { ...common, CAIRN_EVENT_BUS_NAME: props.bus.eventBusName },
    // The run's decider: the machines it starts, stops and answers, and the run settings its rules read (deadline,
    // replans, approval timeout, replan watch). No plan limits (its rules take none) and no bus (what it announces
    // travels in the outbox of its commit).
    Decider: {
      ...common,
      CAIRN_RUN_MACHINE_ARN: machines.run.arn,
      CAIRN_STEP_MACHINE_ARN: machines.step.arn,
      CAIRN_RUN_DEADLINE_SECONDS: coordinator.CAIRN_RUN_DEADLINE_SECONDS,
      CAIRN_MAX_REPLANS: coordinator.CAIRN_MAX_REPLANS,
      ...admission,
      ...retention,
      ...runTimeouts(config),
    },
  };
}

/** The approval timeout and the replan watch, when the deployment sets them. */
function runTimeouts(config: FunctionsConfig): Record<string, string> {
  return {
    ...(config.approvalTimeoutSeconds === undefined
      ? {}
      : { CAIRN_APPROVAL_TIMEOUT_SECONDS: String(config.approvalTimeoutSeconds) }),
    ...(config.replanWatchSeconds === undefined
      ? {}
      : { CAIRN_REPLAN_WATCH_SECONDS: String(config.replanWatchSeconds) }),
  };
}

/** Lambda refuses more than 4 KB of environment: say so at synth, not at deploy. */
const ENVIRONMENT_LIMIT_BYTES = 4096;
/** What an unresolved token (a table name, an ARN) may take once deployed. */
const TOKEN_BYTES = 140;

function checkedEnvironment(key: FunctionKey, environment: Record<string, string>): Record<string, string> {
  let bytes = 0;
  for (const [name, value] of Object.entries(environment)) {
    bytes += name.length + (Token.isUnresolved(value) ? TOKEN_BYTES : Buffer.byteLength(value, 'utf8'));
  }
  if (bytes > ENVIRONMENT_LIMIT_BYTES) {
    throw new Error(
      `the ${key} Lambda's environment would be about ${bytes} bytes, over Lambda's 4 KB: ` +
        'shorten context bindings',
    );
  }
  return environment;
}

/**
 * The planner is capped so a burst of runs cannot exhaust the account's Bedrock quota; the step executor so a wide
 * plan cannot flood the capabilities it calls. The other functions only talk to the stack's own services.
 */
function reservedConcurrency(key: FunctionKey, config: FunctionsConfig): { reservedConcurrentExecutions?: number } {
  const value =
    key === 'Planner' ? config.plannerConcurrency : key === 'StepExecutor' ? config.executorConcurrency : undefined;
  return value === undefined ? {} : { reservedConcurrentExecutions: value };
}

const INFERENCE_PROFILE = /^(us|eu|apac|us-gov|jp|au|ca|global)\.(.+)$/;

/**
 * `bedrock:InvokeModel` (the action Converse is authorized by) on exactly the configured models. A cross-region
 * inference profile id (`us.…`, `eu.…`, `global.…`) is allowed on the profile in this region, and on the foundation
 * model in whichever region the profile routes to, but only when called through that profile.
 */
export function grantModelInvoke(grantee: IGrantable, stack: Stack, modelIds: readonly string[]): void {
  for (const modelId of new Set(modelIds)) {
    if (modelId.startsWith('arn:')) {
      allow(grantee, ['bedrock:InvokeModel'], [modelId]);
      continue;
    }
    const profile = INFERENCE_PROFILE.exec(modelId);
    if (!profile) {
      allow(
        grantee,
        ['bedrock:InvokeModel'],
        [`arn:${stack.partition}:bedrock:${stack.region}::foundation-model/${modelId}`],
      );
      continue;
    }
    const profileArn = stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId });
    allow(grantee, ['bedrock:InvokeModel'], [profileArn]);
    allow(grantee, ['bedrock:InvokeModel'], [`arn:${stack.partition}:bedrock:*::foundation-model/${profile[2]}`], {
      StringEquals: { 'bedrock:InferenceProfileArn': profileArn },
    });
  }
}

function bindingTargets(bindings: Readonly<Record<string, unknown>> | undefined): {
  modelIds: string[];
  functionArns: string[];
} {
  const modelIds: string[] = [];
  const functionArns: string[] = [];
  for (const binding of Object.values(bindings ?? {})) {
    if (typeof binding !== 'object' || binding === null) continue;
    const { kind, modelId, functionArn } = binding as Record<string, unknown>;
    if (kind === 'bedrock' && typeof modelId === 'string') modelIds.push(modelId);
    if (kind === 'lambda' && typeof functionArn === 'string') functionArns.push(functionArn);
  }
  return { modelIds, functionArns };
}

/** What the planning functions read for an OpenAI-compatible planner (shared/config/settings.ts). */
function modelEndpointEnvironment(endpoint: FunctionsConfig['modelEndpoint']): Record<string, string> {
  if (endpoint === undefined) return {};
  return {
    CAIRN_MODEL_URL: endpoint.url,
    CAIRN_MODEL: endpoint.model,
    ...(endpoint.apiKeySecret === undefined ? {} : { CAIRN_MODEL_API_KEY_SECRET: endpoint.apiKeySecret }),
  };
}

/**
 * `secretsmanager:GetSecretValue` on exactly the named secrets: an ARN as given, a name as this region's and
 * account's secret of that name (`-??????`: the six characters Secrets Manager appends to every secret's ARN).
 */
export function grantSecretRead(grantee: IGrantable, stack: Stack, secrets: readonly string[]): void {
  const resources = [...new Set(secrets)].map((secret) =>
    secret.startsWith('arn:')
      ? secret
      : stack.formatArn({
          service: 'secretsmanager',
          resource: 'secret',
          resourceName: `${secret}-??????`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
  );
  allow(grantee, ['secretsmanager:GetSecretValue'], resources);
}
