/**
 * The two state machine definitions out of a synthesized CloudFormation template, with their references resolved to
 * placeholder ARNs. Nothing here loads the CDK: a boot that finds its machines in the synthesis cache
 * (synth-cache.ts) never pays for aws-cdk-lib, and only synth.ts, which synthesizes, imports it.
 */
import { FUNCTION_KEYS, type FunctionKey, MACHINE_IDS } from '../constructs/state-names.ts';

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
  /** The function key of each Lambda's logical id: plain data, what the synthesis cache keeps. */
  readonly functionKeys: Readonly<Record<string, FunctionKey>>;
  /** The function key (`Planner`, `Coordinator`, ...) of a Lambda ARN, function name or logical id in the ASL. */
  readonly functionOf: (resource: string) => FunctionKey | undefined;
}

/** The machines from their plain parts (a template's, or the synthesis cache's). */
export function machinesOf(
  run: AslDefinition,
  step: AslDefinition,
  functionKeys: Readonly<Record<string, FunctionKey>>,
): ExtractedMachines {
  const keys = new Map(Object.entries(functionKeys));
  const functionOf = (resource: string): FunctionKey | undefined => {
    // `arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`, or a bare name / logical id.
    const name = resource.startsWith('arn:') ? resource.split(':')[6] : resource;
    return name === undefined ? undefined : keys.get(name);
  };
  return { run, step, functionKeys, functionOf };
}

export function extractStateMachines(template: CloudFormationTemplate): ExtractedMachines {
  const resources = template.Resources;
  const functionKeys: Record<string, FunctionKey> = {};
  const machineByKind = new Map<'run' | 'step', AslDefinition>();
  for (const [logicalId, resource] of Object.entries(resources)) {
    const segments = cdkPath(resource)?.split('/') ?? [];
    if (resource.Type === 'AWS::Lambda::Function' && segments.at(-1) === 'Resource') {
      const key = segments.at(-2);
      if (segments.at(-3) === 'Functions' && isFunctionKey(key)) functionKeys[logicalId] = key;
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
  return machinesOf(run, step, functionKeys);
}

export function isFunctionKey(value: string | undefined): value is FunctionKey {
  return FUNCTION_KEYS.some((key) => key === value);
}

function cdkPath(resource: TemplateResource): string | undefined {
  const path = resource.Metadata?.['aws:cdk:path'];
  return typeof path === 'string' ? path : undefined;
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
