/**
 * Synthesizes the cairn stack for the infra tests: asset bundling skipped, path metadata on (the local runtime's
 * function lookup needs it), any CDK context on top, optionally with cdk-nag's checks.
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { INagLogger } from 'cdk-nag';
import { addNagChecks } from '../../infra/constructs/nag.ts';
import { CairnStack, configFromContext } from '../../infra/stack.ts';

export interface Synthesized {
  readonly app: App;
  readonly stack: CairnStack;
  readonly template: Template;
}

export function synthStack(
  context: Record<string, unknown> = {},
  options: { nag?: boolean; nagLoggers?: INagLogger[] } = {},
): Synthesized {
  const app = new App({
    context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true, stage: 'test', ...context },
  });
  const stack = new CairnStack(app, 'Cairn-test', { config: configFromContext(app.node) });
  if (options.nag) addNagChecks(app, [stack], options.nagLoggers);
  return { app, stack, template: Template.fromStack(stack as Stack) };
}

/** A context with everything optional switched on: Bedrock planner and agent, Lambda binding, webhooks, CORS. */
export const FULL_CONTEXT = {
  modelId: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
  bindings: JSON.stringify({
    'agent:report.writer': { kind: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' },
    'tool:ci.build': { kind: 'lambda', functionArn: 'arn:aws:lambda:us-east-1:123456789012:function:build' },
  }),
  webhookSources: 'github,ci',
  consoleOrigin: 'https://console.example.com',
  alarmTopicArn: 'arn:aws:sns:us-east-1:123456789012:cairn-alarms',
} as const;

/** The same with an outside OIDC issuer instead of the built-in user pool. */
export const OIDC_CONTEXT = {
  ...FULL_CONTEXT,
  jwtIssuer: 'https://login.example.com/',
  jwtAudience: 'cairn-api,cairn-console',
  oidcAuthorizeUrl: 'https://login.example.com/authorize',
  oidcTokenUrl: 'https://login.example.com/oauth/token',
  oidcClientId: 'cairn-console',
} as const;

export interface PolicyStatementJson {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

/** Every IAM statement in the template (policies, inline role policies), with the logical id it belongs to. */
export function statementsOf(template: Template): { owner: string; statement: PolicyStatementJson }[] {
  const out: { owner: string; statement: PolicyStatementJson }[] = [];
  const push = (owner: string, document: unknown) => {
    const statements = (document as { Statement?: PolicyStatementJson[] } | undefined)?.Statement ?? [];
    for (const statement of statements) out.push({ owner, statement });
  };
  for (const [id, policy] of Object.entries(template.findResources('AWS::IAM::Policy'))) {
    push(id, (policy.Properties as { PolicyDocument: unknown }).PolicyDocument);
  }
  for (const [id, policy] of Object.entries(template.findResources('AWS::IAM::ManagedPolicy'))) {
    push(id, (policy.Properties as { PolicyDocument: unknown }).PolicyDocument);
  }
  for (const [id, role] of Object.entries(template.findResources('AWS::IAM::Role'))) {
    const inline = (role.Properties as { Policies?: { PolicyDocument: unknown }[] }).Policies ?? [];
    for (const policy of inline) push(id, policy.PolicyDocument);
  }
  return out;
}

export const actionsOf = (statement: PolicyStatementJson): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

export const resourcesOf = (statement: PolicyStatementJson): unknown[] =>
  Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];

/** Logical id of the one resource of `type` whose CDK path ends with `pathSuffix`. */
export function logicalIdAt(template: Template, type: string, pathSuffix: string): string {
  const found = Object.entries(template.findResources(type)).filter(([, resource]) =>
    String((resource.Metadata as Record<string, unknown> | undefined)?.['aws:cdk:path'] ?? '').endsWith(pathSuffix),
  );
  if (found.length !== 1) throw new Error(`${found.length} ${type} at …${pathSuffix}`);
  return (found[0] as [string, unknown])[0];
}

/** Where the built-in user pool's token trigger (role groups → scopes) is: the one function not under /Functions/. */
export const TOKEN_TRIGGER_PATH = '/Api/Users/TokenTrigger/Function/Resource';

const pathOf = (resource: { Metadata?: unknown }): string =>
  String((resource.Metadata as Record<string, unknown> | undefined)?.['aws:cdk:path'] ?? '');

/** cairn's own Lambdas (the Functions construct's), without the user pool's token trigger. */
export function cairnFunctions(template: Template): Record<string, unknown>[] {
  return Object.values(template.findResources('AWS::Lambda::Function'))
    .filter((fn) => pathOf(fn).includes('/Functions/'))
    .map((fn) => fn.Properties as Record<string, unknown>);
}
