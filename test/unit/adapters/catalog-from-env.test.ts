import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { catalogFromEnv, catalogFromFile, deploymentCatalog } from '../../../shared/adapters/catalog-from-env.ts';
import { isCatalogError } from '../../../shared/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'cairn-catalog-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const catalogText = (target: string): string =>
  JSON.stringify({
    capabilities: [{ target, description: target, inputSchema: {}, outputSchema: {}, sideEffect: 'none' }],
  });

const write = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
};

describe('catalogFromEnv', () => {
  it('reads the catalog file CAIRN_CATALOG_FILE names', () => {
    const file = write('file.json', catalogText('tool:from.file'));
    expect(catalogFromEnv({ CAIRN_CATALOG_FILE: file }).targets()).toEqual(['tool:from.file']);
  });

  it('prefers CAIRN_CATALOG_FILE over CAIRN_CATALOG, and CAIRN_CATALOG over the demo catalog', () => {
    const file = write('both.json', catalogText('tool:from.file'));
    const inline = catalogText('tool:from.env');
    expect(catalogFromEnv({ CAIRN_CATALOG_FILE: file, CAIRN_CATALOG: inline }).targets()).toEqual(['tool:from.file']);
    expect(catalogFromEnv({ CAIRN_CATALOG_FILE: ' ', CAIRN_CATALOG: inline }).targets()).toEqual(['tool:from.env']);
    const demo = catalogFromEnv({});
    expect(demo.has('tool:web.search')).toBe(true);
    expect(catalogFromEnv({ CAIRN_CATALOG_FILE: '', CAIRN_CATALOG: '' }).targets()).toEqual(demo.targets());
  });

  it('fails with a CatalogError naming the file when the file is missing', () => {
    const missing = join(dir, 'missing.json');
    const error = thrown(() => catalogFromEnv({ CAIRN_CATALOG_FILE: missing, CAIRN_CATALOG: catalogText('x:y') }));
    expect(isCatalogError(error)).toBe(true);
    expect((error as Error).message).toContain(missing);
    expect((error as Error).message).toMatch(/cannot be read/);
  });

  it('fails with a CatalogError naming the file when the file is not a valid catalog', () => {
    for (const [name, text] of [
      ['not-json.json', '{"capabilities": ['],
      ['bad-shape.json', '{"capabilities": 1}'],
    ] as const) {
      const file = write(name, text);
      const error = thrown(() => catalogFromFile(file));
      expect(isCatalogError(error)).toBe(true);
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).toMatch(/invalid catalog/);
      expect((error as { context: Record<string, unknown> }).context.file).toBe(file);
    }
  });

  it('loads the source the settings name, as the AWS place does for every handler', () => {
    const file = write('source.json', catalogText('tool:from.source'));
    expect(deploymentCatalog({ file }).targets()).toEqual(['tool:from.source']);
    expect(deploymentCatalog({ json: catalogText('tool:inline') }).targets()).toEqual(['tool:inline']);
    expect(deploymentCatalog({}).has('tool:web.search')).toBe(true);
  });
});
