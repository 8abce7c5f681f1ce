/**
 * Who may do what: the four roles, what each one grants, and the one table of route → role. The handler's check
 * (authorize.ts, registered by `serve`), the OpenAPI document's `security` and the API Gateway route scopes in CDK
 * (infra/constructs/api.ts) all read this table, so a route's rule is written once.
 *
 * - `viewer` reads: runs, plans, events, steps, approvals.
 * - `operator` reads, and starts, cancels, replans, invalidates, compensates and raises a paused run's limits (and
 *   asks for plans).
 * - `approver` reads, and decides approvals (and dry-runs an edited output).
 * - `admin` does all of it.
 *
 * Deployed, a role comes from a JWT claim: a group named as the role (`cognito:groups` by default) or a scope
 * `<prefix><role>` (`cairn/operator` by default); API Gateway refuses a token without one of a route's scopes, and
 * the handler checks again. Locally, from the tokens file.
 */
import { DEFAULT_ROLE_CLAIMS } from '../../config/defaults.ts';

export const ROLES = ['viewer', 'operator', 'approver', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** What a route needs: a role, or only a verified caller whatever its roles (`caller`: who am I). */
export type Need = Role | 'caller';

/** The roles that hold each role's rights: every role reads, and admin holds them all. */
export const GRANTED_BY: Readonly<Record<Role, readonly Role[]>> = {
  viewer: ['viewer', 'operator', 'approver', 'admin'],
  operator: ['operator', 'admin'],
  approver: ['approver', 'admin'],
  admin: ['admin'],
};

/** Whether roles meet a need. */
export const holds = (roles: ReadonlySet<Role>, need: Need): boolean =>
  need === 'caller' || GRANTED_BY[need].some((role) => roles.has(role));

/**
 * The table: every route that needs a caller, by operationId, with the role it needs (the public routes and the
 * signed webhooks are not in it: they take no bearer token). It is whole: routes/index.ts checks it against the
 * contract's routes, so a route added without a line here does not compile (the check lives there, so this file
 * imports no route and the routes may import it).
 */
export const ROUTE_ROLES = {
  // runs
  createRun: 'operator',
  listRuns: 'viewer',
  getRun: 'viewer',
  getRunPlan: 'viewer',
  listRunEvents: 'viewer',
  cancelRun: 'operator',
  getRunCommand: 'viewer',
  // a run's changes
  invalidateStep: 'operator',
  actOnCompensation: 'operator',
  replanRun: 'operator',
  raiseBudget: 'operator',
  getPlanDiff: 'viewer',
  // the console's reads
  getStep: 'viewer',
  listRevisions: 'viewer',
  getRevisionDiff: 'viewer',
  getTimeline: 'viewer',
  // plans: asking for one may call the planning model; validating decides nothing
  createPlan: 'operator',
  getPlanJob: 'viewer',
  validatePlan: 'viewer',
  // approvals: the inbox lists only what the caller may decide (approval-rules.ts)
  listApprovals: 'viewer',
  getApproval: 'viewer',
  decideApproval: 'approver',
  checkApprovalOutput: 'approver',
  // service
  getCaller: 'caller',
  conformanceLedger: 'viewer',
} as const satisfies Readonly<Record<string, Need>>;

/** The need of a route that takes a bearer token; undefined for one that is not in the table. */
export const needOfOperation = (operationId: string): Need | undefined =>
  Object.hasOwn(ROUTE_ROLES, operationId) ? ROUTE_ROLES[operationId as keyof typeof ROUTE_ROLES] : undefined;

/**
 * The scopes that let a request through API Gateway to a route with this need (the gateway lets a request in when
 * the token has any one of them); none for `caller`: any valid token.
 */
export const scopesFor = (need: Need, prefix: string = DEFAULT_ROLE_CLAIMS.scopePrefix): string[] =>
  need === 'caller' ? [] : GRANTED_BY[need].map((role) => `${prefix}${role}`);

/** The role scopes a person's groups give (the built-in user pool's token trigger adds them to the access token). */
export const roleScopesOfGroups = (groups: readonly string[], prefix: string): string[] =>
  ROLES.filter((role) => groups.includes(role)).map((role) => `${prefix}${role}`);
