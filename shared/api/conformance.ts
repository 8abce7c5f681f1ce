/**
 * The conformance pack's window: the ledger of the mutating conformance capability, so a double side effect is
 * visible from outside. Mounted only when the stack runs with the pack.
 */
import { Hono } from 'hono';
import type { ApiEnv } from './deps.ts';

export function conformanceRoutes(ledger: { entries(): unknown[] }): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.get('/conformance/ledger', (c) => c.json({ entries: ledger.entries() }));
  return app;
}
