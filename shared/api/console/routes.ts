/**
 * The console's routes, as app.ts registers them: the static page (before authentication) and the data endpoints
 * (after it).
 */
import type { Hono } from 'hono';
import type { ApiDeps, ApiEnv } from '../deps.ts';
import { consoleAssetRoutes } from './assets.ts';
import { consoleOptions } from './config.ts';
import { consoleDataRoutes } from './data-routes.ts';

export { consoleDataRoutes };

/** The page, its files and config.json; options come from the console settings the deps carry (config.ts). */
export const consoleRoutes = (deps: ApiDeps): Hono<ApiEnv> =>
  consoleAssetRoutes(consoleOptions(deps.console, deps.auth));
