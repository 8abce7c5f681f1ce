/**
 * One NodejsFunction per Lambda (arm64, Node.js 22, ESM bundles), with the environment every handler reads and
 * least-privilege grants. The construct ids are the function keys the embedded runtime maps Task states to.
 */
import { fileURLToPath } from 'node:url';
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import type { FunctionKey } from './state-names.ts';

/** Lambda timeouts; the state machines give every Task a little more so the Lambda's own timeout reports first. */
export const FUNCTION_TIMEOUT_SECONDS: Readonly<Record<FunctionKey, number>> = {
  Planner: 300,
  Validator: 60,
  Coordinator: 60,
  StepExecutor: 900,
  Api: 29,
};

const MEMORY_MB: Readonly<Record<FunctionKey, number>> = {
  Planner: 1024,
  Validator: 512,
  Coordinator: 512,
  StepExecutor: 1024,
  Api: 1024,
};

const ENTRIES: Readonly<Record<FunctionKey, string>> = {
  Planner: 'planner.ts',
  Validator: 'validator.ts',
  Coordinator: 'coordinator.ts',
  StepExecutor: 'step-executor.ts',
  Api: 'api.ts',
};

export interface MachineRef {
  readonly name: string;
  readonly arn: string;
}

export interface FunctionsConfig {
  readonly stage: string;
  readonly runDeadlineSeconds: number;
  readonly maxSteps: number;
  readonly maxDepth: number;
  readonly maxReplans: number;
  readonly modelId?: string;
  /** Capability bindings (the `CAIRN_BINDINGS` JSON): Lambda and Bedrock bindings also become grants. */
  readonly bindings?: Readonly<Record<string, unknown>>;
}

export interface FunctionsProps {
  readonly config: FunctionsConfig;
  readonly table: ITable;
  readonly bus: IEventBus;
  /** Names and ARNs fixed before the machines exist: the machines reference the functions, not the other way. */
  readonly machines: { readonly run: MachineRef; readonly step: MachineRef };
}

export class Functions extends Construct {
  readonly byKey: Readonly<Record<FunctionKey, NodejsFunction>>;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    const { config, machines } = props;
    const environment: Record<string, string> = {
      CAIRN_STAGE: config.stage,
      CAIRN_TABLE_NAME: props.table.tableName,
      CAIRN_EVENT_BUS_NAME: props.bus.eventBusName,
      CAIRN_RUN_MACHINE_ARN: machines.run.arn,
      CAIRN_STEP_MACHINE_ARN: machines.step.arn,
      CAIRN_RUN_DEADLINE_SECONDS: String(config.runDeadlineSeconds),
      CAIRN_MAX_STEPS: String(config.maxSteps),
      CAIRN_MAX_DEPTH: String(config.maxDepth),
      CAIRN_MAX_REPLANS: String(config.maxReplans),
      POWERTOOLS_SERVICE_NAME: 'cairn',
      NODE_OPTIONS: '--enable-source-maps',
      ...(config.modelId === undefined ? {} : { CAIRN_MODEL_ID: config.modelId }),
      ...(config.bindings === undefined ? {} : { CAIRN_BINDINGS: JSON.stringify(config.bindings) }),
    };
    const make = (key: FunctionKey): NodejsFunction =>
      new NodejsFunction(this, key, {
        entry: fileURLToPath(new URL(`../../functions/${ENTRIES[key]}`, import.meta.url)),
        handler: 'handler',
        projectRoot: fileURLToPath(new URL('../..', import.meta.url)),
        depsLockFilePath: fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: MEMORY_MB[key],
        timeout: Duration.seconds(FUNCTION_TIMEOUT_SECONDS[key]),
        environment,
        bundling: {
          format: OutputFormat.ESM,
          target: 'node22',
          mainFields: ['module', 'main'],
          minify: true,
          sourceMap: true,
          // Bundle the pinned AWS SDK too: the same client versions as in tests, not whatever the runtime ships.
          externalModules: [],
          banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        },
      });
    this.byKey = {
      Planner: make('Planner'),
      Validator: make('Validator'),
      Coordinator: make('Coordinator'),
      StepExecutor: make('StepExecutor'),
      Api: make('Api'),
    };
    this.grant(props);
  }

  private grant(props: FunctionsProps): void {
    const { Planner, Coordinator, StepExecutor, Api } = this.byKey;
    const stack = Stack.of(this);
    for (const fn of Object.values(this.byKey)) props.table.grantReadWriteData(fn);
    for (const fn of [Coordinator, StepExecutor, Api]) props.bus.grantPutEventsTo(fn);

    const { run, step } = props.machines;
    const executionsOf = (machine: MachineRef): string =>
      stack.formatArn({
        service: 'states',
        resource: 'execution',
        resourceName: `${machine.name}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
    const allow = (grantee: IGrantable, actions: string[], resources: string[]): void => {
      grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources }));
    };
    const answerTokens = ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'];
    // The API starts runs, cancels them and answers approvals; the coordinator starts steps, answers the run's
    // waiter and stops open step executions at a deadline.
    allow(Api, ['states:StartExecution'], [run.arn]);
    allow(Api, answerTokens, [run.arn, step.arn]);
    allow(Api, ['states:StopExecution', 'states:DescribeExecution'], [executionsOf(run), executionsOf(step)]);
    allow(Coordinator, ['states:StartExecution'], [run.arn, step.arn]);
    allow(Coordinator, answerTokens, [run.arn, step.arn]);
    allow(Coordinator, ['states:StopExecution', 'states:DescribeExecution'], [executionsOf(run), executionsOf(step)]);

    const plannerModels = bedrockResources(stack, props.config.modelId === undefined ? [] : [props.config.modelId]);
    for (const fn of [Planner, Api]) {
      if (plannerModels.length > 0) allow(fn, ['bedrock:InvokeModel'], plannerModels);
    }
    const bindings = bindingTargets(props.config.bindings);
    const agentModels = bedrockResources(stack, bindings.modelIds);
    if (agentModels.length > 0) allow(StepExecutor, ['bedrock:InvokeModel'], agentModels);
    if (bindings.functionArns.length > 0) allow(StepExecutor, ['lambda:InvokeFunction'], bindings.functionArns);
  }
}

/** Converse on a model id or a cross-region inference profile (`us.`, `eu.`, `apac.`, `global.` prefixes). */
function bedrockResources(stack: Stack, modelIds: readonly string[]): string[] {
  const resources = new Set<string>();
  for (const modelId of modelIds) {
    const profile = /^(us|eu|apac|us-gov|jp|au|ca|global)\.(.+)$/.exec(modelId);
    const baseModel = profile?.[2] ?? modelId;
    // An inference profile routes to the foundation model in any of its regions.
    resources.add(`arn:${stack.partition}:bedrock:*::foundation-model/${baseModel}`);
    if (profile) {
      resources.add(stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId }));
    }
  }
  return [...resources];
}

function bindingTargets(bindings: Readonly<Record<string, unknown>> | undefined): {
  modelIds: string[];
  functionArns: string[];
} {
  const modelIds: string[] = [];
  const functionArns: string[] = [];
  for (const binding of Object.values(bindings ?? {})) {
    if (typeof binding !== 'object' || binding === null) continue;
    const { kind, modelId, functionArn } = binding as { kind?: unknown; modelId?: unknown; functionArn?: unknown };
    if (kind === 'bedrock' && typeof modelId === 'string') modelIds.push(modelId);
    if (kind === 'lambda' && typeof functionArn === 'string') functionArns.push(functionArn);
  }
  return { modelIds, functionArns };
}
