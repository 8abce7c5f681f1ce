#!/usr/bin/env node
// The `cairn` command runs the TypeScript sources directly (tsx), so it works right after `npm ci`.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('../shared/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
