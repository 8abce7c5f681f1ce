/**
 * Cursors of the API's lists. A cursor is opaque to clients: base64url of a small JSON position (what was listed
 * last), tagged with the list it belongs to so that a cursor of one list is refused by another. A cursor is client
 * input like any other: it is decoded strictly and a bad one is a coded 400 (E_BAD_CURSOR), never a 500 or a store
 * query with attacker-chosen keys.
 *
 * Every list answers `{ <items>, nextCursor? }`: `nextCursor` is present when there may be more, and a page may hold
 * fewer items than `limit` (filters apply after the page is read), so clients follow `nextCursor` until it is absent.
 */
import { z } from 'zod';
import { ApiError } from './errors.ts';

const MAX_CURSOR_CHARS = 1024;

const isoTime = z
  .string()
  .min(10)
  .max(40)
  .regex(/^[0-9TZ:.+-]+$/);
const id = z.string().min(1).max(256);

const positions = {
  runs: z.strictObject({ createdAt: isoTime, runId: id }),
  approvals: z.strictObject({ createdAt: isoTime, approvalId: id }),
  steps: z.strictObject({ index: z.number().int().min(0).max(1_000_000) }),
} as const;

export type CursorList = keyof typeof positions;
export type Position<L extends CursorList> = z.infer<(typeof positions)[L]>;

const badCursor = (list: CursorList, why: string): ApiError =>
  new ApiError(400, 'E_BAD_CURSOR', `cursor is not one this list of ${list} gave out: ${why}`);

export function encodeCursor<L extends CursorList>(list: L, position: Position<L>): string {
  return Buffer.from(JSON.stringify({ l: list, p: position }), 'utf8').toString('base64url');
}

export function decodeCursor<L extends CursorList>(list: L, cursor: string): Position<L> {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw badCursor(list, 'not base64url');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor(list, 'not JSON');
  }
  const envelope = z.strictObject({ l: z.literal(list), p: z.unknown() }).safeParse(parsed);
  if (!envelope.success) throw badCursor(list, 'made for another list');
  const position = positions[list].safeParse(envelope.data.p);
  if (!position.success) throw badCursor(list, 'not a position');
  return position.data as Position<L>;
}

/** Query-string field for `limit`: a positive integer up to `max`. */
export const limitField = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'must be a positive integer' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(max))
    .optional();

/** Query-string field for `cursor`. */
export const cursorField = z.string().min(1).max(MAX_CURSOR_CHARS).optional();
