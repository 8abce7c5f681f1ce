/**
 * `npm run openapi`: writes the OpenAPI document and the client's generated types from the API's contract
 * (scripts/openapi-outputs.ts says what), relative to the project root. `--check` writes nothing and exits 1 when
 * a committed file differs from what the contract makes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_TYPES_FILE, DOCUMENT_FILE, renderClientTypes, renderDocument } from './openapi-outputs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const outputs: [string, string][] = [
  [DOCUMENT_FILE, renderDocument()],
  [CLIENT_TYPES_FILE, await renderClientTypes()],
];
let stale = 0;
for (const [file, text] of outputs) {
  const path = join(root, file);
  const current = await readFile(path, 'utf8').catch(() => '');
  if (current === text) continue;
  if (check) {
    stale++;
    console.error(`${file} is out of date: run npm run openapi`);
  } else {
    await writeFile(path, text);
    console.log(`wrote ${file}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
