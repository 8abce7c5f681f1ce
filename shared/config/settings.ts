/**
 * The one parser of a deployment's settings: the CAIRN_* environment variables (the names CDK sets on each Lambda,
 * see infra/constructs/functions.ts and api.ts) → a typed, validated Settings object, with the defaults of
 * shared/config/defaults.ts for what is absent or blank. Every Lambda entry reads its settings through it (at its
 * first invocation, never at import), and the embedded runtime maps its options onto the same object.
 *
 * A bad value fails loudly, naming the variable; every bad variable is reported at once. Names that only some
 * places need (the table, the machines, the bus) stay optional here: `requireSetting` fails, naming the variable,
 * where an adapter actually needs one, so the validator does not need the machines' ARNs.
 *
 * Pure: it reads the record it is given (no `process.env`), no file and no clock. The catalog is a source (a file
 * name or inline JSON) that the place loads.
 */
import { z } from 'zod';
import { type BindingsConfig, bindingsConfigFromJson } from '../capabilities/registry.ts';
import { type BuiltinPack, parseBuiltinPacks } from '../capabilities/runtime-registry.ts';
import type { PriceTable } from '../engine/budget.ts';
import type { TraceRetention } from '../engine/trace.ts';
import { CairnError } from '../errors.ts';
import type { ExpressionLimits } from '../plan/expression-limits.ts';
import type { PlanLimits } from '../plan/validate.ts';
import {
  DEFAULT_BUILTIN_PACKS,
  DEFAULT_CONSOLE_OIDC_SCOPE,
  DEFAULT_DECISION_WAIT_MS,
  DEFAULT_EXPRESSION_LIMITS,
  DEFAULT_EXPRESSION_WORKERS,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_LIMITS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_REPLANS,
  DEFAULT_MAX_RUNNING_RUNS_PER_TENANT,
  DEFAULT_REPLAY_WINDOW_SECONDS,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_RETRY_BASE_SECONDS,
  DEFAULT_RETRY_CAP_SECONDS,
  DEFAULT_ROLE_CLAIMS,
  DEFAULT_RUN_DEADLINE_SECONDS,
  DEFAULT_TRACE_RETENTION,
  MAX_REPLAY_WINDOW_SECONDS,
} from './defaults.ts';
import {
  given,
  httpsUrl,
  httpUrl,
  nonNegative,
  numberOf,
  parsedBy,
  positiveInteger,
  text,
  webhookSecrets,
  webhookTenants,
} from './env-values.ts';
import { checkNotifyEnv, type NotifySettings, notifyEnvFields, notifySettingsOf } from './notify-settings.ts';
import { parsePrices } from './prices.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export interface RunSettings {
  /** CAIRN_RUN_DEADLINE_SECONDS: how long a run may take from StartRun (a whole number of seconds ≥ 1). */
  readonly runDeadlineSeconds: number;
  /** CAIRN_RETRY_BASE_SECONDS and CAIRN_RETRY_CAP_SECONDS: the step machine's backoff. */
  readonly retryBaseSeconds: number;
  readonly retryCapSeconds: number;
  /** CAIRN_TRACE_RETENTION: `last` or `full`. */
  readonly traceRetention: TraceRetention;
  /** CAIRN_MAX_REPLANS: replans per run; 0 turns replanning off. */
  readonly maxReplans: number;
  /**
   * CAIRN_APPROVAL_TIMEOUT_SECONDS: the deadline of an approval that names no timeout of its own (a step's approval
   * without `timeoutSeconds`, a revision's); absent: the run deadline.
   */
  readonly approvalTimeoutSeconds?: number | undefined;
  /**
   * CAIRN_REPLAN_WATCH_SECONDS: how long after a final failure its replan watch declines it if the replanner has not
   * answered (a timer of the run's decider, engine/run/rules/replans.ts); absent: the platform's default
   * (DEFAULT_REPLAN_WATCH_SECONDS on AWS).
   */
  readonly replanWatchSeconds?: number | undefined;
}

export interface Settings {
  /** Where the AWS adapters point; absent ones fail (requireSetting) only where an adapter needs them. */
  readonly aws: {
    /** CAIRN_TABLE_NAME */
    readonly tableName: string | undefined;
    /** CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN */
    readonly runMachineArn: string | undefined;
    readonly stepMachineArn: string | undefined;
    /** CAIRN_EVENT_BUS_NAME */
    readonly eventBusName: string | undefined;
    /** CAIRN_PLANNER_FUNCTION_NAME, CAIRN_REPLANNER_FUNCTION_NAME: the API's planning jobs go to these. */
    readonly plannerFunctionName: string | undefined;
    readonly replannerFunctionName: string | undefined;
    /** CAIRN_MAILBOX_URL, CAIRN_MAILBOX_ARN: the runs' mailbox queue (SQS FIFO) the decider Lambda reads. */
    readonly mailboxUrl: string | undefined;
    readonly mailboxArn: string | undefined;
    /** CAIRN_SCHEDULER_ROLE_ARN: the role one-time schedules send timers into the mailbox with. */
    readonly schedulerRoleArn: string | undefined;
    /** CAIRN_SCHEDULE_GROUP: the schedule group timers are made in (the scheduler role may send from it alone). */
    readonly scheduleGroup: string | undefined;
    /** CAIRN_OUTBOX_DEAD_LETTERS_URL: the outbox stream's on-failure queue, which the outbox redrive reads. */
    readonly outboxDeadLettersUrl: string | undefined;
  };
  /** CAIRN_CATALOG_FILE (wins), else CAIRN_CATALOG (inline JSON), else the bundled demo catalog. */
  readonly catalog: { readonly file: string | undefined; readonly json: string | undefined };
  /** CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH */
  readonly limits: PlanLimits;
  readonly run: RunSettings;
  /**
   * CAIRN_MAX_RUNNING_RUNS_PER_TENANT: how many runs of one tenant run at once (a positive integer; absent: no bound,
   * `Infinity`). A run over it waits `queued` and starts, oldest first, when one of the tenant's runs ends
   * (shared/services/admission.ts).
   */
  readonly maxRunningRunsPerTenant: number;
  /** CAIRN_RETENTION_DAYS: how long a run's records are kept after it ends (a number of days > 0), in seconds. */
  readonly retentionSeconds: number;
  /** CAIRN_PLANNER_MODEL_ID, or CAIRN_MODEL_ID as the CDK functions construct names it; absent: the HTN planner. */
  readonly plannerModelId: string | undefined;
  /** The planner's model behind an OpenAI-compatible endpoint, instead of Bedrock or the HTN planner. */
  readonly plannerEndpoint: PlannerEndpointSettings | undefined;
  readonly capabilities: {
    /** CAIRN_BINDINGS: target → binding (checked by shared/capabilities/registry.ts). */
    readonly bindings: BindingsConfig;
    /** CAIRN_BUILTINS: `demo,conformance`, or `none`. */
    readonly builtins: readonly BuiltinPack[];
    /** CAIRN_MAX_OUTPUT_BYTES */
    readonly maxOutputBytes: number;
    /** CAIRN_IDEMPOTENCY_TTL_SECONDS */
    readonly idempotencyTtlSeconds: number;
    /** CAIRN_PRICES: model id or target → US dollars per million tokens (shared/config/prices.ts). */
    readonly prices: PriceTable;
  };
  /** CAIRN_DECISION_WAIT_MS: how long the API waits for a cancel's or an invalidation's decision before a 202. */
  readonly decisionWaitMs: number;
  /** CAIRN_API_TOKEN: a static bearer token (an admin); absent, the API trusts API Gateway's JWT authorizer. */
  readonly apiToken: string | undefined;
  /** CAIRN_TOKENS_FILE: the embedded API's tokens file, a token per person (shared/api/tokens-file.ts). */
  readonly apiTokensFile: string | undefined;
  /**
   * CAIRN_ROLE_GROUPS_CLAIM, CAIRN_ROLE_SCOPES_CLAIM, CAIRN_ROLE_SCOPE_PREFIX: where a verified JWT's roles are
   * (a group named as the role, or a scope `<prefix><role>`); defaults DEFAULT_ROLE_CLAIMS.
   */
  readonly roleClaims: {
    readonly groups: string;
    readonly scopes: string;
    readonly scopePrefix: string;
    /** CAIRN_TENANT_CLAIM: the claim naming a caller's tenant (default `custom:tenant`; absent: the default tenant). */
    readonly tenant: string;
  };

  readonly webhooks: {
    /** CAIRN_WEBHOOK_SECRET_PREFIX: Secrets Manager names `<prefix>/<source>` (deployed). */
    readonly secretPrefix: string | undefined;
    /** CAIRN_WEBHOOK_SECRETS: source → secret, a JSON object (the embedded runtime). */
    readonly secrets: ReadonlyMap<string, string>;
    /** CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS: an integer in 1..MAX_REPLAY_WINDOW_SECONDS. */
    readonly replayWindowSeconds: number;
    /** CAIRN_WEBHOOK_TENANTS: source → tenant, a JSON object; a source not named is the default tenant's. */
    readonly tenants: ReadonlyMap<string, string>;
  };
  readonly console: ConsoleSettings;
  readonly expressions: ExpressionSettings;
  /** The approval notifier (CAIRN_NOTIFY_*, CAIRN_CONSOLE_URL: config/notify-settings.ts). */
  readonly notify: NotifySettings;
}

/** Where and within which bounds plan expressions are evaluated (shared/adapters/expressions). */
export interface ExpressionSettings {
  /** CAIRN_EXPRESSION_TIMEOUT_MS, CAIRN_EXPRESSION_MEMORY_MB; the other bounds are the defaults. */
  readonly limits: ExpressionLimits;
  /** CAIRN_EXPRESSION_WORKERS: how many worker processes a process keeps. */
  readonly workers: number;
  /** CAIRN_EXPRESSION_WORKER: the built worker module (a Lambda bundle's); absent: the sources' worker. */
  readonly workerFile: string | undefined;
}

/**
 * CAIRN_MODEL_URL and CAIRN_MODEL (both or neither): an OpenAI-compatible Chat Completions endpoint and the model
 * that plans. Its key, when it needs one: CAIRN_MODEL_API_KEY (npm start), or CAIRN_MODEL_API_KEY_SECRET, a Secrets
 * Manager secret name or ARN (deployed).
 */
export interface PlannerEndpointSettings {
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey: string | undefined;
  readonly apiKeySecret: string | undefined;
}

/** How the console signs in and where it finds its files (shared/api/console/config.ts tells the page). */
export interface ConsoleSettings {
  /**
   * CAIRN_CONSOLE_OIDC_AUTHORIZE_URL, CAIRN_CONSOLE_OIDC_TOKEN_URL, CAIRN_CONSOLE_OIDC_CLIENT_ID (all three or
   * none), CAIRN_CONSOLE_OIDC_SCOPE (default `openid`), CAIRN_CONSOLE_OIDC_TOKEN (`access` or `id`: which token the
   * API's authorizer expects; default `access`).
   */
  readonly oidc:
    | {
        readonly authorizeUrl: string;
        readonly tokenUrl: string;
        readonly clientId: string;
        readonly scope: string;
        readonly tokenField: 'access_token' | 'id_token';
      }
    | undefined;
  /** CAIRN_CONSOLE_API_BASE: the API's origin when it is not the page's own (no trailing slash). */
  readonly apiBase: string | undefined;
  /** CAIRN_CONSOLE_DIR: where the console files are (a bundled Lambda). */
  readonly dir: string | undefined;
}

/** A setting that is missing or cannot be right; `variables` names every variable at fault. */
export class SettingsError extends CairnError {
  readonly variables: readonly string[];
  constructor(problems: readonly { readonly variable: string; readonly message: string }[]) {
    super('SettingsError', problems.map((p) => p.message).join('; '), {
      retryable: false,
      context: { variables: problems.map((p) => p.variable) },
    });
    this.variables = problems.map((p) => p.variable);
  }
}

export const isSettingsError = (error: unknown): error is SettingsError =>
  error instanceof Error && error.name === 'SettingsError' && Array.isArray((error as SettingsError).variables);

/** The variable each AWS setting comes from. */
const AWS_VARIABLES = {
  tableName: 'CAIRN_TABLE_NAME',
  runMachineArn: 'CAIRN_RUN_MACHINE_ARN',
  stepMachineArn: 'CAIRN_STEP_MACHINE_ARN',
  eventBusName: 'CAIRN_EVENT_BUS_NAME',
  plannerFunctionName: 'CAIRN_PLANNER_FUNCTION_NAME',
  replannerFunctionName: 'CAIRN_REPLANNER_FUNCTION_NAME',
  mailboxUrl: 'CAIRN_MAILBOX_URL',
  mailboxArn: 'CAIRN_MAILBOX_ARN',
  schedulerRoleArn: 'CAIRN_SCHEDULER_ROLE_ARN',
  scheduleGroup: 'CAIRN_SCHEDULE_GROUP',
  outboxDeadLettersUrl: 'CAIRN_OUTBOX_DEAD_LETTERS_URL',
} as const satisfies Record<keyof Settings['aws'], string>;

/** An AWS setting an adapter needs; a missing one fails the cold start loudly instead of the first request quietly. */
export function requireSetting(settings: Settings, key: keyof Settings['aws']): string {
  const value = settings.aws[key];
  if (value === undefined) {
    const variable = AWS_VARIABLES[key];
    throw new SettingsError([{ variable, message: `${variable} is not set` }]);
  }
  return value;
}

const OIDC_TOGETHER = [
  'CAIRN_CONSOLE_OIDC_AUTHORIZE_URL',
  'CAIRN_CONSOLE_OIDC_TOKEN_URL',
  'CAIRN_CONSOLE_OIDC_CLIENT_ID',
] as const;

/** Each key is the variable's name, so an issue's path names the variable. */
/** A number of seconds ≥ 1, rounded down (the step machine's task-token wait takes whole seconds), or absent. */
const optionalSeconds = given.transform((raw, ctx) => {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (Number.isFinite(value) && value >= 1) return Math.floor(value);
  ctx.addIssue({ code: 'custom', message: `must be a number of seconds ≥ 1, got ${JSON.stringify(raw)}` });
  return z.NEVER;
});

const envSchema = z.object({
  CAIRN_TABLE_NAME: text,
  CAIRN_RUN_MACHINE_ARN: text,
  CAIRN_STEP_MACHINE_ARN: text,
  CAIRN_EVENT_BUS_NAME: text,
  CAIRN_PLANNER_FUNCTION_NAME: text,
  CAIRN_REPLANNER_FUNCTION_NAME: text,
  CAIRN_MAILBOX_URL: text,
  CAIRN_MAILBOX_ARN: text,
  CAIRN_SCHEDULER_ROLE_ARN: text,
  CAIRN_SCHEDULE_GROUP: text,
  CAIRN_OUTBOX_DEAD_LETTERS_URL: text,
  CAIRN_CATALOG_FILE: text,
  CAIRN_CATALOG: text,
  CAIRN_MAX_STEPS: positiveInteger(DEFAULT_LIMITS.maxSteps),
  CAIRN_MAX_DEPTH: positiveInteger(DEFAULT_LIMITS.maxDepth),
  // A deadline is a whole number of seconds (the run machine's wait takes integers): a fraction is rounded down.
  CAIRN_RUN_DEADLINE_SECONDS: numberOf(
    (n) => Number.isFinite(n) && n >= 1,
    'a number of seconds ≥ 1',
    DEFAULT_RUN_DEADLINE_SECONDS,
  ).transform(Math.floor),
  // Days, fractions allowed (a test's short retention); kept as whole seconds, at least one.
  CAIRN_RETENTION_DAYS: numberOf((n) => Number.isFinite(n) && n > 0, 'a number of days > 0', DEFAULT_RETENTION_DAYS),
  CAIRN_RETRY_BASE_SECONDS: nonNegative(DEFAULT_RETRY_BASE_SECONDS),
  CAIRN_RETRY_CAP_SECONDS: nonNegative(DEFAULT_RETRY_CAP_SECONDS),
  CAIRN_TRACE_RETENTION: given.transform((raw, ctx): TraceRetention => {
    if (raw === undefined) return DEFAULT_TRACE_RETENTION;
    if (raw === 'last' || raw === 'full') return raw;
    ctx.addIssue({ code: 'custom', message: `must be "last" or "full", got ${JSON.stringify(raw)}` });
    return z.NEVER;
  }),
  CAIRN_MAX_REPLANS: nonNegative(DEFAULT_MAX_REPLANS).transform(Math.floor),
  CAIRN_MAX_RUNNING_RUNS_PER_TENANT: positiveInteger(DEFAULT_MAX_RUNNING_RUNS_PER_TENANT),
  // Absent: the run deadline.
  CAIRN_APPROVAL_TIMEOUT_SECONDS: optionalSeconds,
  // Absent: the platform's default.
  CAIRN_REPLAN_WATCH_SECONDS: optionalSeconds,
  CAIRN_PLANNER_MODEL_ID: text,
  CAIRN_MODEL_ID: text,
  CAIRN_MODEL_URL: httpUrl,
  CAIRN_MODEL: text,
  CAIRN_MODEL_API_KEY: text,
  CAIRN_MODEL_API_KEY_SECRET: text,
  CAIRN_BINDINGS: parsedBy('CAIRN_BINDINGS', bindingsConfigFromJson),
  CAIRN_BUILTINS: parsedBy('CAIRN_BUILTINS', (raw) => parseBuiltinPacks(raw, DEFAULT_BUILTIN_PACKS)),
  CAIRN_MAX_OUTPUT_BYTES: positiveInteger(DEFAULT_MAX_OUTPUT_BYTES),
  CAIRN_IDEMPOTENCY_TTL_SECONDS: positiveInteger(DEFAULT_IDEMPOTENCY_TTL_SECONDS),
  CAIRN_PRICES: parsedBy('CAIRN_PRICES', parsePrices),
  CAIRN_API_TOKEN: text,
  CAIRN_DECISION_WAIT_MS: positiveInteger(DEFAULT_DECISION_WAIT_MS),
  CAIRN_TOKENS_FILE: text,
  CAIRN_ROLE_GROUPS_CLAIM: text,
  CAIRN_ROLE_SCOPES_CLAIM: text,
  CAIRN_ROLE_SCOPE_PREFIX: text,
  CAIRN_TENANT_CLAIM: text,
  CAIRN_WEBHOOK_SECRET_PREFIX: text,
  CAIRN_WEBHOOK_SECRETS: webhookSecrets,
  CAIRN_WEBHOOK_TENANTS: webhookTenants,
  CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS: given.transform((raw, ctx) => {
    if (raw === undefined) return DEFAULT_REPLAY_WINDOW_SECONDS;
    const value = Number(raw);
    if (/^\d+$/.test(raw) && value >= 1 && value <= MAX_REPLAY_WINDOW_SECONDS) return value;
    ctx.addIssue({
      code: 'custom',
      message: `must be an integer in 1..${MAX_REPLAY_WINDOW_SECONDS}, got ${JSON.stringify(raw)}`,
    });
    return z.NEVER;
  }),
  CAIRN_CONSOLE_OIDC_AUTHORIZE_URL: httpsUrl,
  CAIRN_CONSOLE_OIDC_TOKEN_URL: httpsUrl,
  CAIRN_CONSOLE_OIDC_CLIENT_ID: text,
  CAIRN_CONSOLE_OIDC_SCOPE: text,
  CAIRN_CONSOLE_OIDC_TOKEN: given.transform((raw, ctx): 'access_token' | 'id_token' => {
    if (raw === undefined || raw === 'access') return 'access_token';
    if (raw === 'id') return 'id_token';
    ctx.addIssue({ code: 'custom', message: `must be "access" or "id", got ${JSON.stringify(raw)}` });
    return z.NEVER;
  }),
  CAIRN_CONSOLE_API_BASE: httpsUrl,
  CAIRN_CONSOLE_DIR: text,
  CAIRN_EXPRESSION_TIMEOUT_MS: positiveInteger(DEFAULT_EXPRESSION_LIMITS.timeoutMs),
  CAIRN_EXPRESSION_MEMORY_MB: positiveInteger(DEFAULT_EXPRESSION_LIMITS.memoryMb),
  CAIRN_EXPRESSION_WORKERS: positiveInteger(DEFAULT_EXPRESSION_WORKERS),
  CAIRN_EXPRESSION_WORKER: text,
  ...notifyEnvFields,
});

/** The console's provider is configured whole or not at all: a missing one of the three is named. */
const envChecked = envSchema.superRefine((v, ctx) => {
  checkNotifyEnv(v, ctx);
  // The planner's endpoint: URL and model together, and one planning model, not two.
  if ((v.CAIRN_MODEL_URL === undefined) !== (v.CAIRN_MODEL === undefined)) {
    const missing = v.CAIRN_MODEL_URL === undefined ? 'CAIRN_MODEL_URL' : 'CAIRN_MODEL';
    ctx.addIssue({
      code: 'custom',
      path: [missing],
      message: 'is not set: an OpenAI-compatible planner needs CAIRN_MODEL_URL and CAIRN_MODEL together',
    });
  }
  const bedrock = v.CAIRN_PLANNER_MODEL_ID ?? v.CAIRN_MODEL_ID;
  if (v.CAIRN_MODEL_URL !== undefined && bedrock !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['CAIRN_MODEL_URL'],
      message: `and a Bedrock planner model (${bedrock}) are both set: choose one planning model`,
    });
  if (v.CAIRN_TOKENS_FILE !== undefined && v.CAIRN_API_TOKEN !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['CAIRN_TOKENS_FILE'],
      message: 'and CAIRN_API_TOKEN are both set: give the tokens file (a token per person) or the one token',
    });
  const missing = OIDC_TOGETHER.filter((name) => v[name] === undefined);
  if (missing.length === 0 || missing.length === OIDC_TOGETHER.length) return;
  for (const name of missing)
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `is not set: console OIDC needs ${OIDC_TOGETHER.join(', ')} together`,
    });
});

/** The variables settingsFromEnv reads, in the order the Settings lists them. */
export const SETTINGS_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** Parses the CAIRN_* variables of `env` (other names are ignored); throws one SettingsError naming every bad one. */
export function settingsFromEnv(env: Env): Settings {
  const parsed = envChecked.safeParse(env);
  if (!parsed.success) {
    throw new SettingsError(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? '(environment)');
        return { variable, message: `${variable}${issue.message.startsWith(':') ? '' : ' '}${issue.message}` };
      }),
    );
  }
  const v = parsed.data;
  return {
    aws: {
      tableName: v.CAIRN_TABLE_NAME,
      runMachineArn: v.CAIRN_RUN_MACHINE_ARN,
      stepMachineArn: v.CAIRN_STEP_MACHINE_ARN,
      eventBusName: v.CAIRN_EVENT_BUS_NAME,
      plannerFunctionName: v.CAIRN_PLANNER_FUNCTION_NAME,
      replannerFunctionName: v.CAIRN_REPLANNER_FUNCTION_NAME,
      mailboxUrl: v.CAIRN_MAILBOX_URL,
      mailboxArn: v.CAIRN_MAILBOX_ARN,
      schedulerRoleArn: v.CAIRN_SCHEDULER_ROLE_ARN,
      scheduleGroup: v.CAIRN_SCHEDULE_GROUP,
      outboxDeadLettersUrl: v.CAIRN_OUTBOX_DEAD_LETTERS_URL,
    },
    catalog: { file: v.CAIRN_CATALOG_FILE, json: v.CAIRN_CATALOG },
    limits: { maxSteps: v.CAIRN_MAX_STEPS, maxDepth: v.CAIRN_MAX_DEPTH },
    run: {
      runDeadlineSeconds: v.CAIRN_RUN_DEADLINE_SECONDS,
      retryBaseSeconds: v.CAIRN_RETRY_BASE_SECONDS,
      retryCapSeconds: v.CAIRN_RETRY_CAP_SECONDS,
      traceRetention: v.CAIRN_TRACE_RETENTION,
      maxReplans: v.CAIRN_MAX_REPLANS,
      ...(v.CAIRN_APPROVAL_TIMEOUT_SECONDS === undefined
        ? {}
        : { approvalTimeoutSeconds: v.CAIRN_APPROVAL_TIMEOUT_SECONDS }),
      ...(v.CAIRN_REPLAN_WATCH_SECONDS === undefined ? {} : { replanWatchSeconds: v.CAIRN_REPLAN_WATCH_SECONDS }),
    },
    maxRunningRunsPerTenant: v.CAIRN_MAX_RUNNING_RUNS_PER_TENANT,
    retentionSeconds: Math.max(1, Math.round(v.CAIRN_RETENTION_DAYS * 24 * 3600)),
    plannerModelId: v.CAIRN_PLANNER_MODEL_ID ?? v.CAIRN_MODEL_ID,
    plannerEndpoint:
      v.CAIRN_MODEL_URL === undefined || v.CAIRN_MODEL === undefined
        ? undefined
        : {
            baseUrl: v.CAIRN_MODEL_URL,
            model: v.CAIRN_MODEL,
            apiKey: v.CAIRN_MODEL_API_KEY,
            apiKeySecret: v.CAIRN_MODEL_API_KEY_SECRET,
          },
    capabilities: {
      bindings: v.CAIRN_BINDINGS,
      builtins: v.CAIRN_BUILTINS,
      maxOutputBytes: v.CAIRN_MAX_OUTPUT_BYTES,
      idempotencyTtlSeconds: v.CAIRN_IDEMPOTENCY_TTL_SECONDS,
      prices: v.CAIRN_PRICES,
    },
    decisionWaitMs: v.CAIRN_DECISION_WAIT_MS,
    apiToken: v.CAIRN_API_TOKEN,
    apiTokensFile: v.CAIRN_TOKENS_FILE,
    roleClaims: {
      groups: v.CAIRN_ROLE_GROUPS_CLAIM ?? DEFAULT_ROLE_CLAIMS.groups,
      scopes: v.CAIRN_ROLE_SCOPES_CLAIM ?? DEFAULT_ROLE_CLAIMS.scopes,
      scopePrefix: v.CAIRN_ROLE_SCOPE_PREFIX ?? DEFAULT_ROLE_CLAIMS.scopePrefix,
      tenant: v.CAIRN_TENANT_CLAIM ?? DEFAULT_ROLE_CLAIMS.tenant,
    },

    webhooks: {
      secretPrefix: v.CAIRN_WEBHOOK_SECRET_PREFIX,
      secrets: v.CAIRN_WEBHOOK_SECRETS,
      replayWindowSeconds: v.CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS,
      tenants: v.CAIRN_WEBHOOK_TENANTS,
    },
    console: {
      oidc:
        v.CAIRN_CONSOLE_OIDC_AUTHORIZE_URL && v.CAIRN_CONSOLE_OIDC_TOKEN_URL && v.CAIRN_CONSOLE_OIDC_CLIENT_ID
          ? {
              authorizeUrl: v.CAIRN_CONSOLE_OIDC_AUTHORIZE_URL,
              tokenUrl: v.CAIRN_CONSOLE_OIDC_TOKEN_URL,
              clientId: v.CAIRN_CONSOLE_OIDC_CLIENT_ID,
              scope: v.CAIRN_CONSOLE_OIDC_SCOPE ?? DEFAULT_CONSOLE_OIDC_SCOPE,
              tokenField: v.CAIRN_CONSOLE_OIDC_TOKEN,
            }
          : undefined,
      apiBase: v.CAIRN_CONSOLE_API_BASE?.replace(/\/+$/, ''),
      dir: v.CAIRN_CONSOLE_DIR,
    },
    expressions: {
      limits: {
        ...DEFAULT_EXPRESSION_LIMITS,
        timeoutMs: v.CAIRN_EXPRESSION_TIMEOUT_MS,
        memoryMb: v.CAIRN_EXPRESSION_MEMORY_MB,
      },
      workers: v.CAIRN_EXPRESSION_WORKERS,
      workerFile: v.CAIRN_EXPRESSION_WORKER,
    },
    notify: notifySettingsOf(v),
  };
}

/** Every setting at its default: what a place starts from when it has no environment to read. */
export const defaultSettings = (): Settings => settingsFromEnv({});
