/**
 * The console's routes, as app.ts registers them: the static page (before authentication) and the data endpoints
 * (after it).
 */
import type { Hono } from 'hono';
import type { ApiDeps, ApiEnv } from '../deps.ts';
import { consoleAssetRoutes } from './assets.ts';
import { consoleOptionsFromEnv } from './config.ts';
import { consoleDataRoutes } from './data-routes.ts';

export { consoleDataRoutes };

/** The page, its files and config.json; options come from the environment (config.ts). */
export const consoleRoutes = (
  deps: ApiDeps,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Hono<ApiEnv> => consoleAssetRoutes(consoleOptionsFromEnv(env, deps.auth));
