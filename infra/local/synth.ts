/**
 * The embedded runtime's view of the CDK app: synthesize it in process (asset bundling skipped) and take the two
 * state machine definitions out of the template (template.ts), so the local interpreter runs exactly the ASL that
 * would be deployed. This is the one module of the embedded runtime that loads aws-cdk-lib; `npm start` reaches it
 * only when the synthesis cache (synth-cache.ts) has no entry for the current sources.
 */
import { rmSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { type CairnConfig, CairnStack, DEFAULT_CONFIG, stackName } from '../stack.ts';
import { type CloudFormationTemplate, type ExtractedMachines, extractStateMachines } from './template.ts';

export {
  type AslDefinition,
  type AslState,
  type CloudFormationTemplate,
  type ExtractedMachines,
  extractStateMachines,
  PLACEHOLDER_ACCOUNT,
  PLACEHOLDER_REGION,
  placeholderFunctionArn,
} from './template.ts';

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

/** Synthesizes and extracts in one call, every time (no cache): the tests of the synthesized ASL use it. */
export function synthesizeStateMachines(config: Partial<CairnConfig> = {}): ExtractedMachines {
  return extractStateMachines(synthesizeTemplate(config));
}
