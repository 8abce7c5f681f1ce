/**
 * Request bodies and queries, checked with zod at the edge: malformed JSON and schema violations are 400s with
 * details, before any route logic runs. A body is read as bytes and decoded strictly: invalid UTF-8 is refused, not
 * turned into U+FFFD, and the strict JSON codec refuses duplicate keys, trailing data and `__proto__` keys.
 */
import type { Context } from 'hono';
import { z } from 'zod';
import { parseStrictJson } from '../plan/json.ts';
import { MAX_OBJECTIVE_LENGTH, TARGET_PATTERN } from '../plan/schema.ts';
import { ApiError, badRequest } from './errors.ts';

/** Bodies larger than this are refused (413) before they are parsed: plans are small, requests are cheap. */
export const MAX_BODY_BYTES = 1024 * 1024;

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(parsed.error, where);
  return parsed.data;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body's text; bytes that are not UTF-8 are a 400, never replaced. */
export function decodeBody(raw: Uint8Array): string {
  try {
    return UTF8.decode(raw);
  } catch {
    throw new ApiError(400, 'E_BAD_REQUEST', 'the request body is not UTF-8 text');
  }
}

/**
 * The body's JSON value, by the plan codec's strict parser: a duplicate key, trailing data or a `__proto__` key is
 * refused here too, not silently resolved. The issue (E_JSON, E_RESERVED_KEY) is the one detail.
 */
export function parseJsonBody(text: string): unknown {
  const parsed = parseStrictJson(text);
  if (parsed.ok) return parsed.value;
  const what = parsed.issue.code === 'E_JSON' ? 'is not valid JSON' : 'is refused';
  throw new ApiError(400, 'E_BAD_REQUEST', `the request body ${what}: ${parsed.issue.message}`, {
    details: [parsed.issue],
  });
}

/** The body's bytes, as they came (read as text, invalid UTF-8 would already be replaced). */
export const bodyBytes = async (c: Context): Promise<Uint8Array> => new Uint8Array(await c.req.arrayBuffer());

/** The body's text, from its bytes. */
const bodyText = async (c: Context): Promise<string> => decodeBody(await bodyBytes(c));

/** A required JSON body from its bytes: decoded strictly, parsed strictly, checked against the schema. */
export function jsonFromBytes<S extends z.ZodType>(bytes: Uint8Array, schema: S): z.infer<S> {
  const text = decodeBody(bytes);
  if (text.trim() === '') throw new ApiError(400, 'E_BAD_REQUEST', 'a JSON request body is required');
  return parseWith(schema, parseJsonBody(text));
}

export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  return jsonFromBytes(await bodyBytes(c), schema);
}

/** As readJson, for a route whose body may be left out: no body (or a blank one) is undefined. */
export async function readOptionalJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S> | undefined> {
  const text = await bodyText(c);
  return text.trim() === '' ? undefined : parseWith(schema, parseJsonBody(text));
}

export const readQuery = <S extends z.ZodType>(c: Context, schema: S): z.infer<S> =>
  parseWith(schema, c.req.query(), 'query');

const objective = z
  .string()
  .max(MAX_OBJECTIVE_LENGTH)
  .refine((s) => s.trim().length > 0, { message: 'must not be blank' });

export const planRequestBody = z.strictObject({
  objective,
  mode: z.enum(['DIRECT', 'DECOMPOSE']).optional(),
  directTarget: z
    .string()
    .regex(TARGET_PATTERN, { message: 'must be tool:<name>, agent:<name> or human:<name>' })
    .optional(),
});

/** The plan may be any JSON value here: validateGenerated judges it and reports coded issues. */
const untrustedPlan = z.json();

export const validateBody = z.strictObject({ plan: untrustedPlan, generated: z.boolean().optional() });

/** `POST /runs` takes either an objective to plan or a plan; which one is decided by the presence of `plan`. */
export const submitBody = z.strictObject({ plan: untrustedPlan });
export const anyObject = z.record(z.string(), z.unknown());

export const decisionBody = z.strictObject({
  decision: z.enum(['approve', 'reject', 'edit']),
  output: z.json().optional(),
  comment: z.string().max(2000).optional(),
});

const positiveInt = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'must be a positive integer' })
    .transform(Number)
    .pipe(z.number().int().min(1).max(max));

export const revisionQuery = z.strictObject({ revision: positiveInt(1_000_000).optional() });
