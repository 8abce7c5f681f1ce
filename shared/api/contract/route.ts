/**
 * A route of the API as one definition: what the OpenAPI document says about it (parameters, body, answers,
 * security) and what the app registers for it (method, path, and whatever a route's definition adds to its
 * handling). A route gains an answer or a header by one field here, and its role by one line of roles.ts; both the
 * document and the app follow.
 */
import type { Handler, Hono, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { requireNeed } from '../authorize.ts';
import type { ApiEnv } from '../deps.ts';
import { type Need, needOfOperation } from './roles.ts';

/** Who may call a route: a bearer token (the default), anyone, or a webhook sender proving a signature. */
export type Access = 'bearer' | 'public' | 'signature';

/**
 * Whether a client may send the same request again after a network error, a 429 or a 503: `safe` (it changes
 * nothing, or nothing more the second time), `keyed` (safe with the same Idempotency-Key, which the client sends),
 * `never` (a second request could do the thing twice). GETs are `safe` unless they say otherwise.
 */
export type Retry = 'safe' | 'keyed' | 'never';

export interface ResponseDef {
  readonly description: string;
  /** Absent: the answer has no body worth describing (a shared error answer says its own). */
  readonly schema?: z.ZodType;
  readonly headers?: Readonly<Record<string, { readonly description: string }>>;
  readonly example?: unknown;
}

export interface RouteDef {
  /** Stable: the generated client and the CLI name the operation by it. */
  readonly operationId: string;
  readonly method: 'get' | 'post';
  /** The OpenAPI path, parameters in braces: `/runs/{runId}`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly access?: Access;
  readonly retry?: Retry;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly headers?: z.ZodObject;
  readonly body?: { readonly schema: z.ZodType; readonly required: boolean; readonly example?: unknown };
  /** The answers this route gives besides the shared errors (400, 401, 404, 413, 500, 503) the document adds. */
  readonly responses: Readonly<Record<number, ResponseDef>>;
  /** Documented, not served on every stack (the conformance ledger): the app need not register it. */
  readonly optional?: true;
}

export const defineRoute = <const R extends RouteDef>(route: R): R => route;

export const accessOf = (route: RouteDef): Access => route.access ?? 'bearer';
export const retryOf = (route: RouteDef): Retry => route.retry ?? (route.method === 'get' ? 'safe' : 'never');

/** `/runs/{runId}` as Hono writes it: `/runs/:runId` (as a type too, so handlers keep their typed params). */
export type HonoPath<P extends string> = P extends `${infer A}{${infer N}}${infer B}` ? `${A}:${N}${HonoPath<B>}` : P;
export const honoPath = <P extends string>(path: P): HonoPath<P> =>
  path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1') as HonoPath<P>;

/**
 * What a route needs of its caller (roles.ts): undefined for a public or signed route, which takes no bearer token.
 * A bearer route missing from the table is a programming error, refused when the app is built.
 */
export function needOf(route: RouteDef): Need | undefined {
  if (accessOf(route) !== 'bearer') return undefined;
  const need = needOfOperation(route.operationId);
  if (need === undefined) throw new Error(`roles: ${route.operationId} has no line in ROUTE_ROLES`);
  return need;
}

/**
 * Registers the handler of a defined route, after its role check (authorize.ts) and the route's own middleware
 * (`before`, e.g. a tighter body limit): the one place where a route's definition shapes its handling.
 */
export function serve<R extends RouteDef>(
  app: Hono<ApiEnv>,
  route: R,
  handler: Handler<ApiEnv, HonoPath<R['path']>>,
  options: { readonly before?: readonly MiddlewareHandler<ApiEnv>[] } = {},
): void {
  const need = needOf(route);
  const handlers: (MiddlewareHandler<ApiEnv> | Handler<ApiEnv>)[] = [
    ...(need === undefined ? [] : [requireNeed(need)]),
    ...(options.before ?? []),
    handler as Handler<ApiEnv>,
  ];
  app.on(route.method.toUpperCase(), [honoPath(route.path)], ...handlers);
}
