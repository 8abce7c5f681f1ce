/**
 * The capability catalog a deployed Lambda runs with, the one place every handler loads it from:
 * CAIRN_CATALOG_FILE (a catalog file shipped in the function bundle; Lambda's 4 KB environment cannot hold a real
 * catalog), else CAIRN_CATALOG (catalog JSON inline, for small catalogs and local runs), else the demo catalog
 * bundled with the code.
 */
import { readFileSync } from 'node:fs';
import demoCatalog from '../catalog/demo.json' with { type: 'json' };
import { type Env, settingsFromEnv } from '../config/settings.ts';
import { CatalogError, isCatalogError } from '../errors.ts';
import { type Catalog, loadCatalog, parseCatalog } from '../plan/catalog.ts';

/** Where a deployment's catalog comes from (Settings.catalog): a file, else inline JSON, else the demo catalog. */
export interface CatalogSource {
  readonly file?: string | undefined;
  readonly json?: string | undefined;
}

export function deploymentCatalog(source: CatalogSource): Catalog {
  if (source.file !== undefined) return catalogFromFile(source.file);
  return source.json !== undefined ? parseCatalog(source.json) : loadCatalog(demoCatalog);
}

/** The catalog the variables name, read through the one settings parser (blank counts as absent). */
export const catalogFromEnv = (env: Env): Catalog => deploymentCatalog(settingsFromEnv(env).catalog);

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
