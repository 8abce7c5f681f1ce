/**
 * The embedded API's HTTP server: @hono/node-server's, with timeouts of its own (DEFAULT_LOCAL_SERVER_TIMEOUTS).
 * Node's defaults let 500 connections that never send a byte stay open past a minute, and a body sent a byte a
 * second be held for five; API Gateway cuts both deployed, so the embedded stack does too.
 *
 * Node answers 408 itself for a request whose headers or whole body are late (when nothing was answered yet); a
 * socket idle past `idleMs` (a body that stopped half-way, a connection left open) is closed without an answer.
 */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { DEFAULT_LOCAL_SERVER_TIMEOUTS } from '../../shared/config/defaults.ts';
import { CairnError } from '../../shared/errors.ts';

export type ServerTimeouts = typeof DEFAULT_LOCAL_SERVER_TIMEOUTS;

/** A timeout option that is not a positive number of milliseconds, or headers allowed longer than the request. */
export class BadServerTimeoutsError extends CairnError {
  static readonly code = 'E_BAD_SERVER_TIMEOUTS';
  constructor(message: string) {
    super('BadServerTimeoutsError', message, { retryable: false, context: { code: BadServerTimeoutsError.code } });
  }
}

/** The given timeouts over the defaults, checked: whole positive milliseconds, headers no later than the request. */
export function serverTimeouts(given: Partial<ServerTimeouts> = {}): ServerTimeouts {
  const timeouts = { ...DEFAULT_LOCAL_SERVER_TIMEOUTS, ...given };
  for (const [name, value] of Object.entries(timeouts))
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new BadServerTimeoutsError(`serverTimeouts.${name} must be a positive whole number of ms, got ${value}`);
  // Node refuses the pair otherwise: the headers are part of the request.
  if (timeouts.headersMs > timeouts.requestMs)
    throw new BadServerTimeoutsError('serverTimeouts.headersMs must not exceed serverTimeouts.requestMs');
  return timeouts;
}

/** How often node looks for late headers and requests: its default, 30 s, would let one run 30 s over. */
const checkingInterval = (timeouts: ServerTimeouts): number => Math.min(1000, timeouts.headersMs);

export interface ServeApiOptions {
  readonly port: number;
  readonly hostname: string;
  readonly timeouts: ServerTimeouts;
}

/** Serves `fetch` on the port and resolves once it listens. */
export async function serveApi(
  fetch: (request: Request) => Response | Promise<Response>,
  options: ServeApiOptions,
): Promise<Server> {
  const { timeouts } = options;
  const server = serve({
    fetch,
    port: options.port,
    hostname: options.hostname,
    serverOptions: {
      requestTimeout: timeouts.requestMs,
      headersTimeout: timeouts.headersMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: checkingInterval(timeouts),
    },
  }) as Server;
  // Without a 'timeout' listener node destroys the socket itself.
  server.setTimeout(timeouts.idleMs);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}
