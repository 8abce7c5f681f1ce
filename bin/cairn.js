#!/usr/bin/env node
// The `cairn` command runs the TypeScript sources directly (tsx), so it works right after `npm ci`.
import { readFileSync } from 'node:fs';

// Before anything else loads: an older Node fails later in ways that say nothing about why.
const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const required = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(engines?.node || '');
if (required) {
  const want = required.slice(1).map((part) => Number(part || 0));
  const have = process.versions.node.split('.').map(Number);
  const index = want.findIndex((part, i) => part !== (have[i] || 0));
  if (index >= 0 && (have[index] || 0) < want[index]) {
    process.stderr.write(
      `cairn: needs Node ${engines.node}, this is Node ${process.versions.node}: install a newer Node\n`,
    );
    process.exit(2);
  }
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../shared/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
