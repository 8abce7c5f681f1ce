/**
 * Gzip for the JSON reads a watching page repeats (a run's steps, the runs list): their JSON repeats itself and
 * shrinks about tenfold. The body is compressed in one call at zlib's fastest level, not through a stream: a 50 KB
 * page of 100 runs took 5.6 ms through Hono's stream-based `compress` and takes well under a millisecond so, for
 * nearly the same size. Only a whole JSON answer of `threshold` bytes or more is compressed, never a stream (the
 * event feed), and only for a client that takes gzip; a strong ETag becomes weak, as the body's bytes change.
 */
import { constants, gzipSync } from 'node:zlib';
import type { MiddlewareHandler } from 'hono';

const TAKES_GZIP = /(?:^|,)\s*gzip\s*(?:;\s*q=(?!0(?:\.0*)?\s*(?:,|$))[\d.]+)?\s*(?:,|$)/i;

export function gzipJson(threshold: number): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const res = c.res;
    const type = res.headers.get('content-type') ?? '';
    if (c.req.method === 'HEAD' || !type.startsWith('application/json') || res.headers.has('content-encoding')) return;
    const vary = res.headers.get('vary');
    if (vary === null) c.header('vary', 'accept-encoding');
    else if (!/accept-encoding/i.test(vary)) c.header('vary', `${vary}, accept-encoding`);
    if (!TAKES_GZIP.test(c.req.header('accept-encoding') ?? '') || c.res.body === null) return;
    const body = new Uint8Array(await c.res.arrayBuffer());
    const headers = new Headers(c.res.headers);
    if (body.byteLength < threshold) {
      c.res = new Response(body, { status: c.res.status, headers });
      return;
    }
    headers.set('content-encoding', 'gzip');
    headers.delete('content-length');
    const etag = headers.get('etag');
    if (etag !== null && !etag.startsWith('W/')) headers.set('etag', `W/${etag}`);
    c.res = new Response(gzipSync(body, { level: constants.Z_BEST_SPEED }), { status: c.res.status, headers });
  };
}
