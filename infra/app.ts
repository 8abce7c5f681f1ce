// The CDK app (`npx cdk synth`, `npx cdk deploy -c stage=prod -c modelId=... ...`; docs/deploy.md
// lists the context).
// cdk-nag's AwsSolutions checks run on every synth: an unsuppressed finding fails it.
import { App } from 'aws-cdk-lib';
import { configFromContext, stackName } from './constructs/config.ts';
import { addNagChecks } from './constructs/nag.ts';
import { CairnStack } from './stack.ts';

const app = new App();
const config = configFromContext(app.node);
const stack = new CairnStack(app, stackName(config.stage), { config });
addNagChecks(app, [stack]);
app.synth();
