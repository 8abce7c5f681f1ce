#!/usr/bin/env node
// `npm start`: the embedded cairn stack (dynalite, the synthesized state machines on aws-local-stepfunctions,
// the in-process bus, the HTTP API) in one process, straight from the TypeScript sources.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('../infra/local/main.ts');
process.exitCode = await main(process.argv.slice(2));
