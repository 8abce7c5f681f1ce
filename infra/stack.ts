/**
 * The cairn stack: the table, the event bus, the Lambdas, the two state machines and the HTTP API in front of the
 * API Lambda. Deployment configuration (stage, limits, run deadline, planner model) comes from CDK context, with the
 * same names the Lambdas read from their environment.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { Construct, Node } from 'constructs';
import { Functions, type FunctionsConfig } from './constructs/functions.ts';
import { machineRefs, StateMachines } from './constructs/state-machines.ts';
import { CairnTable } from './constructs/table.ts';

export type CairnConfig = FunctionsConfig;

export const DEFAULT_CONFIG: CairnConfig = {
  stage: 'dev',
  runDeadlineSeconds: 86_400,
  maxSteps: 64,
  maxDepth: 16,
  maxReplans: 3,
};

/** Reads `-c stage=... -c maxSteps=...` (strings on the command line, numbers in cdk.json). */
export function configFromContext(node: Node): CairnConfig {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    return value === undefined || value === null || value === '' ? undefined : String(value);
  };
  const count = (key: string, fallback: number): number => {
    const raw = text(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`context ${key} must be a positive integer, got "${raw}"`);
    return value;
  };
  const stage = text('stage') ?? DEFAULT_CONFIG.stage;
  if (!/^[a-z0-9-]{1,20}$/.test(stage)) throw new Error(`context stage must match [a-z0-9-]{1,20}, got "${stage}"`);
  const modelId = text('modelId');
  const bindings = parseBindings(node.tryGetContext('bindings'));
  return {
    stage,
    runDeadlineSeconds: count('runDeadlineSeconds', DEFAULT_CONFIG.runDeadlineSeconds),
    maxSteps: count('maxSteps', DEFAULT_CONFIG.maxSteps),
    maxDepth: count('maxDepth', DEFAULT_CONFIG.maxDepth),
    maxReplans: count('maxReplans', DEFAULT_CONFIG.maxReplans),
    ...(modelId === undefined ? {} : { modelId }),
    ...(bindings === undefined ? {} : { bindings }),
  };
}

function parseBindings(value: unknown): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('context bindings must be a JSON object of target → binding');
  }
  return parsed as Record<string, unknown>;
}

export const stackName = (stage: string): string => `Cairn-${stage}`;

export interface CairnStackProps extends StackProps {
  readonly config: CairnConfig;
}

export class CairnStack extends Stack {
  readonly functions: Functions;
  readonly machines: StateMachines;

  constructor(scope: Construct, id: string, props: CairnStackProps) {
    super(scope, id, props);
    const { config } = props;
    const table = new CairnTable(this, 'Store', { retain: config.stage === 'prod' });
    const bus = new EventBus(this, 'Bus', { eventBusName: `cairn-${config.stage}` });
    const refs = machineRefs(this, config.stage);
    this.functions = new Functions(this, 'Functions', { config, table: table.table, bus, machines: refs });
    this.machines = new StateMachines(this, 'StateMachines', { functions: this.functions.byKey, machines: refs });

    // Without CAIRN_API_TOKEN the Hono app trusts the gateway's authorizer, so the API is never deployed open:
    // IAM (SigV4) until the infra hardening issue brings the JWT authorizer.
    const api = new HttpApi(this, 'HttpApi', {
      defaultIntegration: new HttpLambdaIntegration('Api', this.functions.byKey.Api),
      defaultAuthorizer: new HttpIamAuthorizer(),
    });
    new CfnOutput(this, 'ApiUrl', { value: api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: table.table.tableName });
    new CfnOutput(this, 'RunMachineArn', { value: this.machines.run.stateMachineArn });
    new CfnOutput(this, 'StepMachineArn', { value: this.machines.step.stateMachineArn });
  }
}
