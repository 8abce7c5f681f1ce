/**
 * The local tokens file (`npm start -- --tokens FILE`, env CAIRN_TOKENS_FILE): who may call the embedded API, each
 * with a token of their own, a subject that every change they make records, and roles (contract/roles.ts).
 *
 * ```json
 * [
 *   { "token": "a-long-random-token-for-ana", "subject": "ana", "roles": ["operator"] },
 *   { "token": "a-long-random-token-for-bo", "subject": "bo", "roles": ["approver"], "groups": ["finance"] }
 * ]
 * ```
 *
 * `groups` (optional) are what an approval's `approvers` name; `tenant` (optional; default `default`) is whose runs
 * and approvals the caller sees and makes. A file that
 * cannot be used stops the start with E_BAD_TOKENS_FILE naming every problem: a typo never leaves the API open or
 * a person without the roles they were meant to have.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_TENANT, TENANT_PATTERN } from '../config/defaults.ts';
import { CairnError } from '../errors.ts';
import { parseStrictJson } from '../plan/json.ts';
import type { Caller } from './caller.ts';
import { ROLES } from './contract/roles.ts';

/** Long enough not to be guessed; visible ASCII, as a bearer token is sent. */
export const MIN_TOKEN_LENGTH = 16;
const NAME = /^[\x21-\x7e]{1,256}$/;

const entrySchema = z.strictObject({
  token: z
    .string()
    .min(MIN_TOKEN_LENGTH, { message: `must be at least ${MIN_TOKEN_LENGTH} characters` })
    .max(512)
    .regex(/^[\x21-\x7e]+$/, { message: 'must be visible ASCII characters (no spaces)' }),
  subject: z.string().regex(NAME, { message: 'must be 1..256 visible ASCII characters' }),
  tenant: z
    .string()
    .regex(TENANT_PATTERN, { message: 'must be 1..128 characters of A-Z a-z 0-9 _ . : @ -' })
    .optional(),
  roles: z.array(z.enum(ROLES)),
  groups: z.array(z.string().regex(NAME, { message: 'must be 1..256 visible ASCII characters' })).optional(),
});

const fileSchema = z
  .array(entrySchema)
  .min(1, { message: 'must list at least one caller' })
  .superRefine((entries, ctx) => {
    const seen = new Map<string, number>();
    entries.forEach((entry, i) => {
      const first = seen.get(entry.token);
      if (first !== undefined)
        ctx.addIssue({ code: 'custom', path: [i, 'token'], message: `is the same token as entry ${first}` });
      else seen.set(entry.token, i);
    });
  });

export type TokenEntry = z.infer<typeof entrySchema>;

/** A tokens file that cannot be used: the message names every problem, by entry and field. */
export class BadTokensFileError extends CairnError {
  static readonly code = 'E_BAD_TOKENS_FILE';
  readonly problems: readonly string[];
  constructor(source: string, problems: readonly string[]) {
    super(BadTokensFileError.code, `${source}: ${problems.join('; ')}`, { context: { problems }, retryable: false });
    this.problems = problems;
  }
}

export const isBadTokensFileError = (error: unknown): error is BadTokensFileError =>
  error instanceof Error && error.name === BadTokensFileError.code;

/** Checks the file's text; `source` names it in the error (the file's path). */
export function parseTokensFile(text: string, source = 'the tokens file'): TokenEntry[] {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    const { path, message } = parsed.issue;
    throw new BadTokensFileError(source, [`not JSON: ${message}${path ? ` (at ${path})` : ''}`]);
  }
  const checked = fileSchema.safeParse(parsed.value);
  if (!checked.success) {
    // Never echo a value: a problem names where it is, and a token stays in the file.
    const problems = checked.error.issues.map((issue) => {
      const where = issue.path.map((p) => `/${String(p)}`).join('') || '(root)';
      return `${where}: ${issue.message}`;
    });
    throw new BadTokensFileError(source, problems);
  }
  return checked.data;
}

/** Reads and checks the file at `path`. */
export function loadTokensFile(path: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new BadTokensFileError(path, [`cannot be read: ${(error as Error).message}`]);
  }
  return parseTokensFile(text, path);
}

/** The caller an entry stands for. */
export const callerOfEntry = (entry: TokenEntry): Caller => ({
  subject: entry.subject,
  roles: new Set(entry.roles),
  groups: [...new Set(entry.groups ?? [])],
  tenant: entry.tenant ?? DEFAULT_TENANT,
  shared: false,
});
