/**
 * The stable error codes of plan validation. Clients, the API and the contract checks match on these strings,
 * so codes are only ever added, never renamed.
 */
import { clipMessage, MAX_ISSUE_CHARS, MAX_LISTED_ISSUES, moreCount, moreItems } from './bounded-text.ts';

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
  // Not a problem of its own: the last item of a list cut at MAX_LISTED_ISSUES, counting the issues left out.
  'E_MORE_ISSUES',
] as const;
export type IssueCode = (typeof ISSUE_CODES)[number];

export interface PlanIssue {
  code: IssueCode;
  /** JSON Pointer (RFC 6901) into the plan document; '' is the document itself. */
  path: string;
  message: string;
}

export const issue = (code: IssueCode, path: string, message: string): PlanIssue => ({ code, path, message });

/** Where the rules put the issues they find: an IssueList, or a plain array. */
export interface IssueSink {
  push(...issues: PlanIssue[]): number;
  /** How many issues were found so far (kept or not). */
  readonly length: number;
}

/** The final issue of a list cut at its cap: how many more were found. */
export const moreIssues = (count: number): PlanIssue => issue('E_MORE_ISSUES', '', moreItems(count));

/** How many issues a list stands for: those it lists and those its final E_MORE_ISSUES counts. */
export function issueTotal(issues: readonly PlanIssue[]): number {
  const last = issues.at(-1);
  const more = last?.code === 'E_MORE_ISSUES' ? moreCount(last.message) : undefined;
  return more === undefined ? issues.length : issues.length - 1 + more;
}

/**
 * The issues of one validation, bounded (./bounded-text.ts): the first MAX_LISTED_ISSUES found are kept, their path
 * and message clipped to MAX_ISSUE_CHARS; the rest are only counted. A plan with 150,000 duplicate dependencies is
 * then a 100-issue answer, not a 15 MB one that no response can carry.
 */
export class IssueList implements IssueSink {
  readonly #kept: PlanIssue[] = [];
  #found = 0;

  push(...issues: PlanIssue[]): number {
    for (const found of issues) {
      this.#found += 1;
      if (this.#kept.length < MAX_LISTED_ISSUES)
        this.#kept.push({
          code: found.code,
          path: clipMessage(found.path, MAX_ISSUE_CHARS),
          message: clipMessage(found.message, MAX_ISSUE_CHARS),
        });
    }
    return this.#found;
  }

  get length(): number {
    return this.#found;
  }

  /** The issues kept, in the order `arrange` gives them, then E_MORE_ISSUES when some were left out. */
  listed(arrange: (kept: PlanIssue[]) => PlanIssue[] = (kept) => kept): PlanIssue[] {
    const listed = arrange([...this.#kept]);
    const more = this.#found - this.#kept.length;
    return more > 0 ? [...listed, moreIssues(more)] : listed;
  }
}

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
