/**
 * The conformance pack's window: the ledger of the mutating conformance capability, so a double side effect is
 * visible from outside. Mounted only when the stack runs with the pack.
 */
import { Hono } from 'hono';
import { serve } from './contract/route.ts';
import { conformanceLedger } from './contract/routes/service.ts';
import type { ApiEnv } from './deps.ts';

export function conformanceRoutes(ledger: { entries(): unknown[] }): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  serve(app, conformanceLedger, (c) => c.json({ entries: ledger.entries() }));
  return app;
}
