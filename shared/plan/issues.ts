/**
 * The stable error codes of plan validation. Clients, the API and the contract checks match on these strings,
 * so codes are only ever added, never renamed.
 */
export const ISSUE_CODES = [
  'E_JSON',
  'E_SCHEMA_VERSION',
  'E_FIELD',
  'E_DUPLICATE_ID',
  'E_UNKNOWN_DEPENDENCY',
  'E_SELF_DEPENDENCY',
  'E_CYCLE',
  'E_PARENT',
  'E_UNKNOWN_TARGET',
  'E_CONTRACT_MISMATCH',
  'E_TOO_MANY_STEPS',
  'E_TOO_DEEP',
  'E_NOT_PENDING',
  'E_EXPRESSION',
  'E_EXPRESSION_UNSAFE',
  'E_MISSING_ROLLBACK',
  'E_APPROVAL',
  'E_RESERVED_KEY',
  'E_CRITERIA',
  'E_BUDGET',
  'E_METADATA_TOO_LARGE',
  'E_FAILURE_POLICY',
  'E_DYNAMIC_REFERENCE',
  'E_LIMIT',
] as const;
export type IssueCode = (typeof ISSUE_CODES)[number];

export interface PlanIssue {
  code: IssueCode;
  /** JSON Pointer (RFC 6901) into the plan document; '' is the document itself. */
  path: string;
  message: string;
}

export const issue = (code: IssueCode, path: string, message: string): PlanIssue => ({ code, path, message });

const escapeToken = (token: string | number): string =>
  typeof token === 'number' ? String(token) : token.replace(/~/g, '~0').replace(/\//g, '~1');

/** Builds a JSON Pointer from path segments: `pointer(['steps', 3, 'dependsOn', 0])` is `/steps/3/dependsOn/0`. */
export const pointer = (segments: readonly (string | number | symbol)[]): string => {
  let out = '';
  for (const segment of segments) out += `/${escapeToken(typeof segment === 'symbol' ? String(segment) : segment)}`;
  return out;
};

/** Appends one segment to an existing pointer. */
export const child = (base: string, segment: string | number): string => `${base}/${escapeToken(segment)}`;
