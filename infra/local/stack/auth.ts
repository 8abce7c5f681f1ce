/**
 * Who may call the embedded API: the tokens file's people (`--tokens FILE`, CAIRN_TOKENS_FILE), each with a token,
 * a subject and roles; without it, one token (the options', CAIRN_API_TOKEN, or a random one) that is an admin, as
 * before roles. The stack's own requests (the demo run, `request`, `startRun`) go with `token`: with a tokens file,
 * the first entry's that may start runs.
 */
import { randomBytes } from 'node:crypto';
import type { AuthConfig } from '../../../shared/api/auth.ts';
import { holds } from '../../../shared/api/contract/roles.ts';
import { loadTokensFile, type TokenEntry } from '../../../shared/api/tokens-file.ts';
import type { Settings } from '../../../shared/config/settings.ts';

export interface LocalAuth {
  readonly auth: AuthConfig;
  /** The token the stack itself calls its API with. */
  readonly token: string;
  /** The tokens file's people (absent: the one token). */
  readonly callers?: readonly Pick<TokenEntry, 'subject' | 'roles'>[];
}

/** Throws BadTokensFileError (E_BAD_TOKENS_FILE) for a tokens file that cannot be used. */
export function localAuth(options: { readonly token?: string | undefined }, settings: Settings): LocalAuth {
  if (settings.apiTokensFile === undefined) {
    const token = options.token ?? settings.apiToken ?? randomBytes(18).toString('base64url');
    return { auth: { kind: 'token', token }, token };
  }
  const tokens = loadTokensFile(settings.apiTokensFile);
  const starter = tokens.find((entry) => holds(new Set(entry.roles), 'operator')) ?? (tokens[0] as TokenEntry); // the file lists at least one
  return {
    auth: { kind: 'tokens', tokens },
    token: starter.token,
    callers: tokens.map(({ subject, roles }) => ({ subject, roles })),
  };
}
