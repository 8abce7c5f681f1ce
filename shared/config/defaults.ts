/**
 * Every default of a cairn deployment, in one place: the Lambdas' settings (shared/config/settings.ts), the embedded
 * runtime (infra/local), the CDK context (infra/constructs/config.ts), the CLI's help texts and the domain core's
 * own fallbacks all import them from here. A second copy of one of these numbers elsewhere is a defect.
 *
 * Pure: values only, no imports, so every layer (the domain core included) may depend on it.
 */

const ONE_DAY_SECONDS = 24 * 60 * 60;

/** How long a run may take from StartRun (CAIRN_RUN_DEADLINE_SECONDS, context runDeadlineSeconds): one day. */
export const DEFAULT_RUN_DEADLINE_SECONDS = ONE_DAY_SECONDS;

/**
 * How long a run's records are kept after it ends (CAIRN_RETENTION_DAYS, context retentionDays): 90 days. Then its
 * run item expires, and with it everything of the run (shared/adapters/aws/dynamo-retention.ts).
 */
export const DEFAULT_RETENTION_DAYS = 90;

/** Runs one listing of runs gives when it names no limit (Store.listRuns). */
export const DEFAULT_RUN_LIST_LIMIT = 100;

/** The plan contract's limits (CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH; context maxSteps, maxDepth). */
export const DEFAULT_LIMITS: { readonly maxSteps: number; readonly maxDepth: number } = Object.freeze({
  maxSteps: 64,
  maxDepth: 16,
});

/** Runs of one tenant running at once (CAIRN_MAX_RUNNING_RUNS_PER_TENANT, context maxRunningRunsPerTenant): no bound. */
export const DEFAULT_MAX_RUNNING_RUNS_PER_TENANT = Number.POSITIVE_INFINITY;

/** Replans a run may make (CAIRN_MAX_REPLANS, context maxReplans); 0 turns replanning off. */
export const DEFAULT_MAX_REPLANS = 3;

/** The step executor Lambda's timeout: the longest one RunStep invocation (one attempt of a step) may take. */
export const STEP_EXECUTOR_TIMEOUT_SECONDS = 900;

/**
 * How long the API waits for a run's decider to answer a cancel or an invalidation (CAIRN_DECISION_WAIT_MS) before it
 * answers 202 with the command's status URL: well inside API Gateway's 29 s, with room for the request's own reads.
 */
export const DEFAULT_DECISION_WAIT_MS = 5_000;

/** The approval notifier Lambda's timeout: the sender's retries (5 tries of 10 s, short backoffs) fit well inside. */
export const NOTIFIER_TIMEOUT_SECONDS = 120;

/**
 * How long the notifier holds a notification it is sending (its idempotency record in progress). Shorter than its
 * Lambda's timeout: a holder that died (timed out, crashed) has let go by the time Lambda's retry (a minute or more
 * later) comes, so the retry sends instead of finding the notification still "being sent" forever. The margin is
 * the time before the lease is taken in an invocation; a live holder's sends end well before it.
 */
export const NOTIFY_LEASE_SECONDS = NOTIFIER_TIMEOUT_SECONDS - 20;

/**
 * What RunStep keeps of its invocation for itself around a capability call: loading and claiming before it, and after
 * a call abandoned at its step's time limit, recording the attempt, failing the step and its follow-ups.
 */
export const STEP_EXECUTOR_MARGIN_SECONDS = 60;

/**
 * The largest `budget.maxSeconds` a step may carry (the validator's E_BUDGET above it). A step's seconds bound each of
 * its attempts, and an attempt runs inside one RunStep invocation: a longer limit would be cut by the Lambda's
 * timeout (a platform error RunStep retries by calling again) before the executor could enforce it. The embedded
 * stack refuses the same, so a plan means the same in both places.
 */
export const MAX_STEP_BUDGET_SECONDS = STEP_EXECUTOR_TIMEOUT_SECONDS - STEP_EXECUTOR_MARGIN_SECONDS;

/** The step machine's retry backoff: base × 2^(attempt−1), at most the cap (CAIRN_RETRY_BASE/CAP_SECONDS). */
export const DEFAULT_RETRY_BASE_SECONDS = 1;
export const DEFAULT_RETRY_CAP_SECONDS = 60;

/** What a succeeded step keeps of its trace (CAIRN_TRACE_RETENTION): its last entry; failed steps keep all. */
export const DEFAULT_TRACE_RETENTION = 'last' as const;

/** The largest output a step may produce, in JSON bytes (CAIRN_MAX_OUTPUT_BYTES): under DynamoDB's 400 KB item. */
export const DEFAULT_MAX_OUTPUT_BYTES = 200_000;

/** How long a side effect's recorded result answers replays (CAIRN_IDEMPOTENCY_TTL_SECONDS): one day. */
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = ONE_DAY_SECONDS;

/** The builtin capability packs a runtime loads (CAIRN_BUILTINS): the demo fakes, so a fresh deploy runs the demo. */
export const DEFAULT_BUILTIN_PACKS: readonly ('demo' | 'conformance')[] = Object.freeze(['demo'] as const);

/** How far a webhook's timestamp may be from the server clock (CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS). */
export const DEFAULT_REPLAY_WINDOW_SECONDS = 300;
/** A window longer than a day would make the replay memory (and a leaked signature) live too long. */
export const MAX_REPLAY_WINDOW_SECONDS = ONE_DAY_SECONDS;

/** The scope the console asks its OIDC provider for (CAIRN_CONSOLE_OIDC_SCOPE). */
export const DEFAULT_CONSOLE_OIDC_SCOPE = 'openid';

/**
 * Where a deployed caller's roles are (shared/api/contract/roles.ts): a group named as the role in the groups claim
 * (Cognito's), or a scope `<prefix><role>` in the scopes claim (CAIRN_ROLE_GROUPS_CLAIM, CAIRN_ROLE_SCOPES_CLAIM,
 * CAIRN_ROLE_SCOPE_PREFIX; CDK context roleGroupsClaim, roleScopesClaim, roleScopePrefix).
 */
export const DEFAULT_ROLE_CLAIMS = {
  groups: 'cognito:groups',
  scopes: 'scope',
  scopePrefix: 'cairn/',
  tenant: 'custom:tenant',
} as const;

/**
 * The tenant of a caller that names none (the one static token, a tokens file entry or a JWT without a tenant), and
 * of every record written before tenants were kept: so everything that existed keeps working, in this tenant.
 */
export const DEFAULT_TENANT = 'default';

/**
 * What a tenant may be called: it becomes part of index partition keys (`#` separates their parts), so only these
 * characters. A claim or tokens file entry naming anything else is refused.
 */
export const TENANT_PATTERN = /^[A-Za-z0-9_.:@-]{1,128}$/;

/** The tenant a record belongs to: records from before tenants were kept are the default tenant's. */
export const tenantOf = (record: { readonly tenant?: string | undefined }): string => record.tenant ?? DEFAULT_TENANT;

/**
 * The bounds of one evaluation of plan expressions (the `input`, `when` and `assert` JSONata of one step), see
 * shared/plan/expression-limits.ts: wall-clock time (CAIRN_EXPRESSION_TIMEOUT_MS; the expressions a claim evaluates
 * together share it), JSONata evaluation depth (about three per level of recursion), the longest sequence and the
 * longest string a built-in may build, and the heap of the worker that evaluates them (CAIRN_EXPRESSION_MEMORY_MB).
 */
export const DEFAULT_EXPRESSION_LIMITS: {
  readonly timeoutMs: number;
  readonly maxDepth: number;
  readonly maxSequence: number;
  readonly maxStringChars: number;
  readonly memoryMb: number;
} = Object.freeze({
  timeoutMs: 1000,
  maxDepth: 1000,
  maxSequence: 1_000_000,
  maxStringChars: 10_000_000,
  memoryMb: 128,
});

/** How many expression workers a process keeps (CAIRN_EXPRESSION_WORKERS): one hostile expression holds one. */
export const DEFAULT_EXPRESSION_WORKERS = 2;

/** Where `npm start` serves the API. */
export const DEFAULT_LOCAL_HOST = '127.0.0.1';
export const DEFAULT_LOCAL_PORT = 3000;

/**
 * The embedded server's own timeouts (API Gateway has its own when deployed): the whole request (headers and body)
 * within `requestMs`, its headers within `headersMs` (past either: 408), an idle keep-alive connection closed after
 * `keepAliveMs`, and any socket without a byte either way for `idleMs` closed. Without them a client holds a
 * connection as long as it likes: node waits a minute for headers and five for a request, and never for an idle one.
 */
export const DEFAULT_LOCAL_SERVER_TIMEOUTS: {
  readonly requestMs: number;
  readonly headersMs: number;
  readonly keepAliveMs: number;
  readonly idleMs: number;
} = Object.freeze({ requestMs: 30_000, headersMs: 10_000, keepAliveMs: 5_000, idleMs: 60_000 });

/**
 * How long after a final failure its replan watch looks whether the replanner answered it (CAIRN_REPLAN_WATCH_SECONDS,
 * context replanWatchSeconds; the timer the run's decider sets on ReplanAsked, engine/run/rules/replans.ts): past
 * every delivery of StepFailed to the replanner on AWS
 * (EventBridge's, then Lambda's two async retries a minute or two apart, each up to the Replanner's 300 s).
 */
export const DEFAULT_REPLAN_WATCH_SECONDS = 1800;

/** The same on the embedded stack, whose bus delivers an event three times within a few hundred milliseconds. */
export const LOCAL_REPLAN_WATCH_SECONDS = 20;
