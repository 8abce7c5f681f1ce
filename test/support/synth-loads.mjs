// A child process of synth-cache-project.test.ts, so that it starts with nothing loaded. Prints one JSON line.
//   synth          synthesizes the CDK app as the cache would, and lists every project file imported or read
//   boot <dir>     loads boot.ts, then the state machines from the cache in <dir>, and says whether the CDK was loaded
import fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = fileURLToPath(new URL('../..', import.meta.url));
const [mode, cacheDir] = process.argv.slice(2);
const imported = new Set();
const read = new Set();
const note = (into, path) => {
  const file = path instanceof URL ? fileURLToPath(path) : typeof path === 'string' ? path : undefined;
  if (file?.startsWith(root)) into.add(file.slice(root.length).split(sep).join('/'));
};
register({ onImport: (url) => url.startsWith('file:') && note(imported, new URL(url)) });
// Reads the synthesis makes outside the module system (a catalog file, an asset it hashes).
for (const [owner, names] of [
  [fs, ['readFileSync', 'readFile', 'openSync', 'open', 'createReadStream']],
  [fs.promises, ['readFile', 'open']],
]) {
  for (const name of names) {
    const original = owner[name];
    owner[name] = function (path, ...rest) {
      note(read, path);
      return original.call(this, path, ...rest);
    };
  }
}
syncBuiltinESMExports();
// onImport is told from the loader's thread: let its messages arrive before reading the set.
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

if (mode === 'synth') {
  const { synthesizeStateMachines } = await import('../../infra/local/synth.ts');
  synthesizeStateMachines();
  await settle();
  const files = [...imported, ...read].filter((file) => !file.startsWith('node_modules/')).sort();
  process.stdout.write(`${JSON.stringify({ files })}\n`);
} else if (mode === 'boot') {
  await import('../../infra/local/boot.ts');
  const { loadStateMachines } = await import('../../infra/local/synth-cache.ts');
  const { outcome } = await loadStateMachines({}, { cacheDir });
  await settle();
  const cdk = `${sep}node_modules${sep}aws-cdk-lib${sep}`;
  const cdkLoaded =
    Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes(cdk)) ||
    [...imported].some((file) => file.startsWith('node_modules/aws-cdk-lib/'));
  process.stdout.write(`${JSON.stringify({ outcome: outcome.kind, cdkLoaded })}\n`);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exitCode = 2;
}
