/**
 * The console's static side: the page, its ES modules and CSS (the project's `console/` folder, no build step), the
 * pinned elkjs browser files from node_modules, and `config.json` (how the page signs in). Served before the API's
 * authentication: the page holds no data, every data request it makes carries a bearer token. Only files found
 * when the folder is first read are served (no path from the URL ever reaches the file system); app files are
 * revalidated by ETag, the versioned vendor files are immutable; both are gzipped once when large.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type Context, Hono } from 'hono';
import type { ApiEnv } from '../deps.ts';
import { errorBody } from '../errors.ts';
import { type ConsoleConfig, type ConsoleOptions, consoleConfig, contentSecurityPolicy } from './config.ts';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};
const GZIP_MIN_BYTES = 1024;
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  readonly body: Uint8Array;
  readonly gzip: Uint8Array | undefined;
  readonly type: string;
  readonly etag: string;
  readonly cache: string;
}

function asset(body: Buffer, type: string, cache: string): Asset {
  const compressible = body.length >= GZIP_MIN_BYTES && !type.startsWith('image/png');
  return {
    body,
    gzip: compressible ? gzipSync(body, { level: 9 }) : undefined,
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    cache,
  };
}

function listFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listFiles(path));
    else if (entry.isFile() && TYPES[extname(entry.name)] !== undefined) found.push(path);
  }
  return found;
}

const elk = createRequire(import.meta.url);

/** The elkjs version served and the URL prefix of its files (relative to /console/). */
export function elkVendor(): { version: string; prefix: string } {
  const pkg = JSON.parse(readFileSync(elk.resolve('elkjs/package.json'), 'utf8')) as { version: string };
  return { version: pkg.version, prefix: `vendor/elkjs-${pkg.version}/` };
}

/** Every servable file, keyed by its path below /console/ ('' is the page). */
export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const file of listFiles(dir)) {
    const key = relative(dir, file).split(sep).join('/');
    assets.set(key, asset(readFileSync(file), TYPES[extname(file)] ?? 'application/octet-stream', 'no-cache'));
  }
  const index = assets.get('index.html');
  if (index) assets.set('', index);
  const vendor = elkVendor();
  for (const name of ['elk-api.js', 'elk-worker.min.js']) {
    assets.set(
      `${vendor.prefix}${name}`,
      asset(readFileSync(elk.resolve(`elkjs/lib/${name}`)), TYPES['.js'] ?? '', IMMUTABLE),
    );
  }
  return assets;
}

export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));

function send(c: Context, found: Asset, headers: Record<string, string>): Response {
  c.header('Content-Type', found.type);
  c.header('Cache-Control', found.cache);
  c.header('ETag', found.etag);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Vary', 'Accept-Encoding');
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  if (c.req.header('if-none-match') === found.etag) return c.body(null, 304);
  if (found.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
    c.header('Content-Encoding', 'gzip');
    return c.body(found.gzip as Uint8Array<ArrayBuffer>);
  }
  return c.body(found.body as Uint8Array<ArrayBuffer>);
}

export function consoleAssetRoutes(options: ConsoleOptions): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  let assets: Map<string, Asset> | undefined;
  let config: ConsoleConfig | undefined;
  // A deployment without the console files (a Lambda bundle that did not copy them) answers 503, not a crash.
  const unavailable = (c: Context, error: unknown): Response => {
    console.error('cairn console: the console files cannot be read', error);
    return c.json(errorBody('E_CONSOLE_UNAVAILABLE', 'the console files are not deployed with this API'), 503);
  };
  const load = (): Map<string, Asset> => {
    assets ??= loadAssets(options.dir ?? DEFAULT_CONSOLE_DIR);
    return assets;
  };
  const configOf = (): ConsoleConfig => {
    config ??= consoleConfig(options, elkVendor().prefix);
    return config;
  };

  app.get('/console', (c) => c.redirect('/console/', 308));
  app.get('/console/config.json', (c) => {
    let answer: ConsoleConfig;
    try {
      answer = configOf();
    } catch (error) {
      return unavailable(c, error);
    }
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.json(answer);
  });
  app.get('/console/*', (c) => {
    const key = c.req.path.slice('/console/'.length);
    let found: Asset | undefined;
    try {
      found = load().get(key);
    } catch (error) {
      return unavailable(c, error);
    }
    if (!found) return c.json(errorBody('E_NOT_FOUND', `no console file ${key}`), 404);
    const page = key === '' || key === 'index.html';
    return send(
      c,
      found,
      page
        ? {
            'Content-Security-Policy': contentSecurityPolicy(configOf()),
            'Referrer-Policy': 'no-referrer',
            'X-Frame-Options': 'DENY',
          }
        : {},
    );
  });
  return app;
}
