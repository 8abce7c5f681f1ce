// The CDK app (`npx cdk synth`, `cdk deploy -c stage=prod -c maxSteps=64 ...`).
import { App } from 'aws-cdk-lib';
import { CairnStack, configFromContext, stackName } from './stack.ts';

const app = new App();
const config = configFromContext(app.node);
new CairnStack(app, stackName(config.stage), { config });
app.synth();
