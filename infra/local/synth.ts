/**
 * The embedded runtime's view of the CDK app: synthesize it in process (asset bundling skipped), take the two state
 * machine definitions out of the CloudFormation template and resolve their references to placeholder ARNs, so the
 * local interpreter runs exactly the ASL that would be deployed.
 */
import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { FUNCTION_KEYS, type FunctionKey, MACHINE_IDS } from '../constructs/state-names.ts';
import { type CairnConfig, CairnStack, DEFAULT_CONFIG, stackName } from '../stack.ts';

export const PLACEHOLDER_REGION = 'us-east-1';
export const PLACEHOLDER_ACCOUNT = '123456789012';
const PSEUDO_PARAMETERS: Readonly<Record<string, string>> = {
  'AWS::Partition': 'aws',
  'AWS::Region': PLACEHOLDER_REGION,
  'AWS::AccountId': PLACEHOLDER_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'Cairn-local',
};

export const placeholderFunctionArn = (logicalId: string): string =>
  `arn:aws:lambda:${PLACEHOLDER_REGION}:${PLACEHOLDER_ACCOUNT}:function:${logicalId}`;

/** An Amazon States Language definition, as far as cairn's tools need to see into it. */
export interface AslState {
  readonly Type: string;
  readonly [field: string]: unknown;
}
export interface AslDefinition {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, AslState>>;
  readonly [field: string]: unknown;
}

export interface CloudFormationTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
  readonly [section: string]: unknown;
}
interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly Metadata?: Readonly<Record<string, unknown>>;
}

export interface ExtractedMachines {
  readonly run: AslDefinition;
  readonly step: AslDefinition;
  /** The function key (`Planner`, `Coordinator`, ...) of a Lambda ARN, function name or logical id in the ASL. */
  readonly functionOf: (resource: string) => FunctionKey | undefined;
}

/** Builds the CDK app in process with bundling skipped and path metadata on; returns the stack's template. */
export function synthesizeTemplate(config: Partial<CairnConfig> = {}): CloudFormationTemplate {
  const full: CairnConfig = { ...DEFAULT_CONFIG, ...config };
  const app = new App({
    context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true },
    analyticsReporting: false,
  });
  const name = stackName(full.stage);
  new CairnStack(app, name, { config: full });
  const assembly = app.synth();
  try {
    return assembly.getStackByName(name).template as CloudFormationTemplate;
  } finally {
    // The assembly went to a temporary directory: nothing of it is needed once the template is in memory.
    rmSync(assembly.directory, { recursive: true, force: true });
  }
}

export function extractStateMachines(template: CloudFormationTemplate): ExtractedMachines {
  const resources = template.Resources;
  const keyByLogicalId = new Map<string, FunctionKey>();
  const machineByKind = new Map<'run' | 'step', AslDefinition>();
  for (const [logicalId, resource] of Object.entries(resources)) {
    const segments = cdkPath(resource)?.split('/') ?? [];
    if (resource.Type === 'AWS::Lambda::Function' && segments.at(-1) === 'Resource') {
      const key = segments.at(-2);
      if (segments.at(-3) === 'Functions' && isFunctionKey(key)) keyByLogicalId.set(logicalId, key);
    }
    if (resource.Type === 'AWS::StepFunctions::StateMachine') {
      const kind = segments.at(-2) === MACHINE_IDS.run ? 'run' : segments.at(-2) === MACHINE_IDS.step ? 'step' : null;
      if (kind === null) continue;
      const text = resolve(resource.Properties?.DefinitionString, resources);
      if (typeof text !== 'string') throw new Error(`state machine ${logicalId} has no resolvable DefinitionString`);
      machineByKind.set(kind, JSON.parse(text) as AslDefinition);
    }
  }
  const run = machineByKind.get('run');
  const step = machineByKind.get('step');
  if (!run || !step) {
    throw new Error('template lacks the run or step state machine (was it synthesized with path metadata?)');
  }
  const functionOf = (resource: string): FunctionKey | undefined => {
    // `arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`, or a bare name / logical id.
    const name = resource.startsWith('arn:') ? resource.split(':')[6] : resource;
    return name === undefined ? undefined : keyByLogicalId.get(name);
  };
  return { run, step, functionOf };
}

/** Synthesizes and extracts in one call: what the embedded runtime and the integration tests use. */
export function synthesizeStateMachines(config: Partial<CairnConfig> = {}): ExtractedMachines {
  return extractStateMachines(synthesizeTemplate(config));
}

function cdkPath(resource: TemplateResource): string | undefined {
  const path = resource.Metadata?.['aws:cdk:path'];
  return typeof path === 'string' ? path : undefined;
}

function isFunctionKey(value: string | undefined): value is FunctionKey {
  return FUNCTION_KEYS.some((key) => key === value);
}

/** Resolves the intrinsics CDK puts into a definition: Fn::Join, Ref and Fn::GetAtt (Arn of a Lambda). */
function resolve(value: unknown, resources: CloudFormationTemplate['Resources']): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => resolve(item, resources));
  const entries = Object.entries(value);
  const [intrinsic, argument] = entries[0] ?? [];
  if (entries.length !== 1 || intrinsic === undefined) {
    return Object.fromEntries(entries.map(([key, item]) => [key, resolve(item, resources)]));
  }
  if (intrinsic === 'Fn::Join') {
    const [separator, parts] = argument as [string, unknown[]];
    return parts.map((part) => String(resolve(part, resources))).join(separator);
  }
  if (intrinsic === 'Ref') {
    const name = String(argument);
    const pseudo = PSEUDO_PARAMETERS[name];
    if (pseudo !== undefined) return pseudo;
    if (resources[name]?.Type === 'AWS::Lambda::Function') return name;
    throw new Error(`cannot resolve Ref ${name} in a state machine definition`);
  }
  if (intrinsic === 'Fn::GetAtt') {
    const [logicalId, attribute] = argument as [string, string];
    if (resources[logicalId]?.Type === 'AWS::Lambda::Function' && attribute === 'Arn') {
      return placeholderFunctionArn(logicalId);
    }
    throw new Error(`cannot resolve Fn::GetAtt ${logicalId}.${attribute} in a state machine definition`);
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolve(item, resources)]));
}
