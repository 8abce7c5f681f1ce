/**
 * The built-in user pool's token trigger (functions/role-scopes.ts): a small function of its own, with its own role
 * that may only write its logs, invoked by Cognito alone when it issues tokens. It turns a person's role groups into
 * the access token's role scopes, which API Gateway checks on each route.
 */
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { CairnConfig } from './config.ts';
import { BUNDLE_TARGET, LAMBDA_RUNTIME } from './functions.ts';

export interface RoleScopesTriggerProps {
  readonly stage: string;
  readonly scopePrefix: string;
  readonly logRetentionDays: CairnConfig['logRetentionDays'];
}

export class RoleScopesTrigger extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: RoleScopesTriggerProps) {
    super(scope, id);
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `cairn ${props.stage}: the user pool's token trigger (role groups to scopes)`,
    });
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    logGroup.grantWrite(this.role);
    this.function = new NodejsFunction(this, 'Function', {
      entry: fileURLToPath(new URL('../../functions/role-scopes.ts', import.meta.url)),
      handler: 'handler',
      projectRoot: fileURLToPath(new URL('../..', import.meta.url)),
      depsLockFilePath: fileURLToPath(new URL('../../package-lock.json', import.meta.url)),
      runtime: LAMBDA_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: 256,
      // Cognito waits 5 seconds for a trigger.
      timeout: Duration.seconds(5),
      role: this.role,
      logGroup,
      environment: { CAIRN_ROLE_SCOPE_PREFIX: props.scopePrefix },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        externalModules: [],
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
    });
  }
}
