/**
 * The capability catalog a deployed Lambda runs with, the one place every handler reads it from:
 * CAIRN_CATALOG_FILE (a catalog file shipped in the function bundle; Lambda's 4 KB environment cannot hold a real
 * catalog), else CAIRN_CATALOG (catalog JSON inline, for small catalogs and local runs), else the demo catalog
 * bundled with the code.
 */
import { readFileSync } from 'node:fs';
import demoCatalog from '../catalog/demo.json' with { type: 'json' };
import { CatalogError, isCatalogError } from '../errors.ts';
import { type Catalog, loadCatalog, parseCatalog } from '../plan/catalog.ts';

export type CatalogEnv = Readonly<Record<string, string | undefined>>;

const given = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

export function catalogFromEnv(env: CatalogEnv): Catalog {
  const file = env.CAIRN_CATALOG_FILE;
  if (given(file)) return catalogFromFile(file);
  const text = env.CAIRN_CATALOG;
  return given(text) ? parseCatalog(text) : loadCatalog(demoCatalog);
}

/** A catalog file; a missing or invalid one fails the cold start with the file's name in the message. */
export function catalogFromFile(path: string): Catalog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CatalogError(`CAIRN_CATALOG_FILE ${path} cannot be read: ${(error as Error).message}`, {
      cause: error,
      context: { file: path },
    });
  }
  try {
    return parseCatalog(text);
  } catch (error) {
    if (!isCatalogError(error)) throw error;
    throw new CatalogError(`CAIRN_CATALOG_FILE ${path}: ${error.message}`, {
      cause: error,
      context: { ...error.context, file: path },
    });
  }
}
