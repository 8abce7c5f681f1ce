/**
 * Conditional reads: a JSON answer carries a weak ETag made from the bytes it holds, and a request whose
 * `If-None-Match` names that tag is answered 304 with no body. A page that polls a run (the console) then downloads
 * a run only when it changed. The tag is a hash of the serialized answer, which is built anyway: no read of the
 * store is added, and two answers with the same content have the same tag whichever process built them. Weak,
 * because the same content may be sent compressed or not.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { z } from 'zod';

export const IF_NONE_MATCH = 'if-none-match';

/** The header a conditional GET may send (for the route's contract). */
export const conditionalHeaders = z.object({
  'If-None-Match': z.string().max(1024).optional(),
});

/** What a route answering conditionally documents: the ETag on its 200, and its 304. */
export const ETAG_HEADER = { ETag: { description: 'A weak tag of this answer: send it as If-None-Match.' } };
export const NOT_MODIFIED = {
  description: 'Not modified: the answer is the same as the one whose ETag was sent as If-None-Match (no body).',
};

/** `W/"<bytes in hex>-<hash>"`: sha1 is native and fast; 96 bits of it tell contents apart well enough here. */
export function weakETag(text: string): string {
  const hash = createHash('sha1').update(text).digest('base64url').slice(0, 16);
  return `W/"${Buffer.byteLength(text).toString(16)}-${hash}"`;
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/** Whether `If-None-Match` names `etag`, compared weakly (RFC 9110 §13.1.2); `*` names any. */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/** Answers `body` as JSON with its weak ETag, or 304 when the request already holds it. */
export function conditionalJson(c: Context, body: unknown): Response {
  const text = JSON.stringify(body);
  const etag = weakETag(text);
  c.header('ETag', etag);
  // Stored by a browser, but asked again every time: the tag makes asking again cheap.
  c.header('Cache-Control', 'private, no-cache');
  if (matches(c.req.header(IF_NONE_MATCH), etag)) return c.body(null, 304);
  c.header('Content-Type', 'application/json');
  return c.body(text, 200);
}
