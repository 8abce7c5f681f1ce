/** The capability catalog a local command (`validate`, `plan`) checks against: the demo one or a file. */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCatalogError } from '../errors.ts';
import { type Catalog, parseCatalog } from '../plan/catalog.ts';
import { InputError, readInputFile } from './local-command.ts';

export const DEFAULT_CATALOG_PATH = fileURLToPath(new URL('../catalog/demo.json', import.meta.url));

/** Resolves `--catalog` against the working directory; without it, the demo catalog. */
export const catalogPathOf = (cwd: string, catalogPath: string | undefined): string =>
  catalogPath === undefined ? DEFAULT_CATALOG_PATH : resolve(cwd, catalogPath);

/** Reads and loads a catalog file; an unreadable or unusable one is an InputError. */
export async function loadCatalogFile(path: string): Promise<Catalog> {
  const text = await readInputFile('catalog', path);
  try {
    return parseCatalog(text);
  } catch (error) {
    if (isCatalogError(error)) throw new InputError(`cannot use the catalog ${path}: ${error.message}`);
    throw error;
  }
}
