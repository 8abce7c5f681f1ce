/**
 * Who is calling: the subject every change records, the roles that decide which routes it may call
 * (contract/roles.ts), the groups an approval's `approvers` name, and its tenant. Made by auth.ts from whichever
 * proof the deployment takes: the one static token (a shared admin), an entry of the tokens file, or the JWT claims
 * API Gateway's authorizer verified.
 */
import { DEFAULT_ROLE_CLAIMS, DEFAULT_TENANT, TENANT_PATTERN } from '../config/defaults.ts';
import { isRole, type Role } from './contract/roles.ts';

export { DEFAULT_ROLE_CLAIMS, DEFAULT_TENANT };

export interface Caller {
  /** The JWT `sub`, a tokens file entry's `subject`, or `local-token` for the one static token. */
  readonly subject: string;
  readonly roles: ReadonlySet<Role>;
  /** Every group the caller is in (roles are groups too, when they come from groups). */
  readonly groups: readonly string[];
  /**
   * Whose data the caller sees and writes: every run, approval, planning job, listing, idempotency key and watched
   * resource is the tenant's own (another tenant's is a 404). `default` when the proof names none.
   */
  readonly tenant: string;
  /**
   * The one static token of a stack without a tokens file: whoever holds it is the same caller, so cairn cannot
   * tell one person from another. It is an admin, and an approval's rules about people (approvers, self-approval)
   * do not apply to it: there is nobody else to decide.
   */
  readonly shared: boolean;
}

/** The identity recorded on decisions for the one static token ('local-token'). */
export const LOCAL_PRINCIPAL = 'local-token';

/** The caller the one static token stands for. */
export const SHARED_CALLER: Caller = {
  subject: LOCAL_PRINCIPAL,
  roles: new Set<Role>(['admin']),
  groups: [],
  tenant: DEFAULT_TENANT,
  shared: true,
};

/**
 * Which claims hold a caller's groups and scopes, the prefix that makes a scope a role (`cairn/operator`), and the
 * claim naming its tenant.
 */
export interface RoleClaims {
  readonly groups: string;
  readonly scopes: string;
  readonly scopePrefix: string;
  readonly tenant?: string;
}

/**
 * The tenant a claim names: absent or empty is the default tenant; a value that cannot be a tenant is `undefined`
 * (the caller is refused, never put in another tenant).
 */
export function tenantOfClaim(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return DEFAULT_TENANT;
  return typeof value === 'string' && TENANT_PATTERN.test(value) ? value : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The values of a list claim. A JWT carries an array; API Gateway's HTTP API hands every claim to the function as
 * a string, an array as `[a b c]`; a scope claim is space-separated (`a b c`); some issuers separate groups with
 * commas. All of them read the same.
 */
export function claimValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v.length > 0);
  if (typeof value !== 'string') return [];
  const inner = /^\[(.*)\]$/s.exec(value.trim())?.[1] ?? value;
  return inner.split(/[\s,]+/).filter((v) => v.length > 0);
}

/** The verified JWT claims of an API Gateway (HTTP API v2, or REST) request context, as hono/aws-lambda passes it. */
export function gatewayClaims(env: unknown): { claims: Record<string, unknown>; scopes: unknown } | undefined {
  if (!isRecord(env) || !isRecord(env.requestContext)) return undefined;
  const authorizer = env.requestContext.authorizer;
  if (!isRecord(authorizer)) return undefined;
  const jwt = isRecord(authorizer.jwt) ? authorizer.jwt : undefined;
  const claims = jwt ? jwt.claims : authorizer.claims;
  return isRecord(claims) ? { claims, scopes: jwt?.scopes } : undefined;
}

/** The JWT `sub` claim from an API Gateway request context; undefined when no authorizer verified a caller. */
export function gatewaySubject(env: unknown): string | undefined {
  const sub = gatewayClaims(env)?.claims.sub;
  return typeof sub === 'string' && sub.length > 0 ? sub : undefined;
}

/**
 * The caller the verified claims describe: roles from the groups claim (a group named as a role) and from the
 * scopes claim (`<prefix><role>`), whichever the issuer gives. Undefined without a subject.
 */
export function callerFromClaims(env: unknown, names: RoleClaims = DEFAULT_ROLE_CLAIMS): Caller | undefined {
  const found = gatewayClaims(env);
  const subject = gatewaySubject(env);
  if (found === undefined || subject === undefined) return undefined;
  const groups = [...new Set(claimValues(found.claims[names.groups]))];
  const scopes = new Set([...claimValues(found.claims[names.scopes]), ...claimValues(found.scopes)]);
  const roles = new Set<Role>(groups.filter(isRole));
  for (const scope of scopes) {
    if (!scope.startsWith(names.scopePrefix)) continue;
    const role = scope.slice(names.scopePrefix.length);
    if (isRole(role)) roles.add(role);
  }
  const tenant = tenantOfClaim(found.claims[names.tenant ?? DEFAULT_ROLE_CLAIMS.tenant]);
  if (tenant === undefined) return undefined;
  return { subject, roles, groups, tenant, shared: false };
}

/** What `GET /me` answers. */
export const callerView = (caller: Caller) => ({
  subject: caller.subject,
  roles: [...caller.roles].sort(),
  groups: [...caller.groups],
  tenant: caller.tenant,
});
