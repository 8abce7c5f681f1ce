/**
 * The deployment's configuration: CDK context (`-c key=value` strings on the command line, JSON values in
 * cdk.json) or stack props, validated once. Every field has a default, so a fresh clone synthesizes offline and the
 * embedded runtime synthesizes the same stack with no context at all.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Node } from 'constructs';
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_REPLANS,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_ROLE_CLAIMS,
  DEFAULT_RUN_DEADLINE_SECONDS,
  TENANT_PATTERN,
} from '../../shared/config/defaults.ts';
import { parseCatalog } from '../../shared/plan/catalog.ts';
import { deployedBindings } from './binding-secrets.ts';

/** Log retention periods CloudWatch Logs accepts (days). */
export const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

export interface JwtConfig {
  /** The OIDC issuer URL (for Cognito `https://cognito-idp.<region>.amazonaws.com/<poolId>`). */
  readonly issuer: string;
  /** Accepted `aud` (or, for access tokens without `aud`, `client_id`) values. */
  readonly audience: readonly string[];
}

/** Where the console signs in with an outside OIDC provider (the built-in user pool fills these in itself). */
export interface ConsoleOidcConfig {
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
}

/**
 * Where a caller's roles are in its JWT (shared/api/contract/roles.ts), and whether API Gateway checks them too.
 * Context `roleGroupsClaim` (default `cognito:groups`: a group named as the role), `roleScopesClaim` (default
 * `scope`) and `roleScopePrefix` (default `cairn/`: a scope `cairn/operator`); `routeScopes` (default true): each
 * route's authorization scopes, so API Gateway refuses a token without the route's role before the function runs.
 * The built-in user pool puts a person's role groups into their access token as those scopes; with an outside issuer
 * that gives groups and no scopes, set `routeScopes` to false and the function alone checks.
 */
export interface RolesConfig {
  readonly groupsClaim: string;
  readonly scopesClaim: string;
  readonly scopePrefix: string;
  /** Context `tenantClaim` (default `custom:tenant`): the claim naming a caller's tenant (absent: `default`). */
  readonly tenantClaim: string;
  readonly routeScopes: boolean;
}

export interface ModelEndpointConfig {
  readonly url: string;
  readonly model: string;
  /** A Secrets Manager secret name or ARN; absent: the endpoint needs no key. */
  readonly apiKeySecret?: string;
}

export interface CairnConfig {
  readonly stage: string;
  readonly runDeadlineSeconds: number;
  readonly maxSteps: number;
  readonly maxDepth: number;
  readonly maxReplans: number;
  /**
   * Runs of one tenant running at once (context maxRunningRunsPerTenant, a positive integer); absent: no bound. Over
   * it a run waits `queued` (shared/services/admission.ts).
   */
  readonly maxRunningRunsPerTenant?: number;
  /** The deadline of an approval without a timeout of its own (context approvalTimeoutSeconds); absent: the run's. */
  readonly approvalTimeoutSeconds?: number;
  /**
   * How long a final failure waits for the replanner's answer before its replan watch declines it (context
   * replanWatchSeconds); absent: DEFAULT_REPLAN_WATCH_SECONDS.
   */
  readonly replanWatchSeconds?: number;
  /** The planner's Bedrock model id or inference profile id; the HTN planner runs when absent. */
  readonly modelId?: string;
  /**
   * The planner's model behind an OpenAI-compatible endpoint (context `modelUrl`, `model`, and `modelApiKeySecret`:
   * the name or ARN of a Secrets Manager secret holding its key), instead of Bedrock; exclusive with `modelId`.
   */
  readonly modelEndpoint?: ModelEndpointConfig;
  /** Capability bindings (the `CAIRN_BINDINGS` JSON): Lambda and Bedrock bindings also become grants. */
  readonly bindings?: Readonly<Record<string, unknown>>;
  /**
   * The capability catalog file (absolute, checked at synth), copied into every function bundle and named by
   * CAIRN_CATALOG_FILE; absent, the bundled demo catalog.
   */
  readonly catalogFile?: string;
  /** An outside JWT issuer; absent, the stack creates a Cognito user pool and uses it. */
  readonly jwt?: JwtConfig;
  readonly consoleOidc?: ConsoleOidcConfig;
  readonly roles: RolesConfig;
  /** The one origin allowed to call the API from a browser (CORS); absent, no CORS at all. */
  readonly consoleOrigin?: string;
  /** Webhook sources, each with its own HMAC secret `cairn/<stage>/webhooks/<source>` in Secrets Manager. */
  readonly webhookSources: readonly string[];
  /**
   * Context `webhookTenants`: a JSON object of source → tenant, the deployed CAIRN_WEBHOOK_TENANTS. A source's change
   * invalidates only its tenant's runs; a source not named reports the default tenant's resources.
   */
  readonly webhookTenants: Readonly<Record<string, string>>;
  /**
   * Where approval notifications go (context `notifyUrls`, https, comma-separated): a notifier Lambda on the bus,
   * its signing secret `cairn/<stage>/notify` in Secrets Manager (infra/constructs/notifier.ts); none when empty.
   */
  readonly notifyUrls: readonly string[];
  /** Keep the table when the stack is deleted or the table replaced (RETAIN + deletion protection). */
  readonly retainData: boolean;
  /** How many days a run's records are kept after it ends (context retentionDays; CAIRN_RETENTION_DAYS). */
  readonly retentionDays: number;
  readonly logRetentionDays: (typeof RETENTION_DAYS)[number];
  /** API Gateway stage throttling: steady requests per second and burst. */
  readonly apiRateLimit: number;
  readonly apiBurstLimit: number;
  /**
   * Reserved concurrency of the planner (Bedrock quotas) and the step executor (capability endpoints): opt in. A
   * reservation is taken from the account's pool, and one the account cannot spare fails the deployment.
   */
  readonly plannerConcurrency?: number;
  readonly executorConcurrency?: number;
  readonly archiveRetentionDays: number;
  /** An SNS topic that receives every alarm; absent, alarms only show on the dashboard. */
  readonly alarmTopicArn?: string;
}

export const DEFAULT_CONFIG: CairnConfig = {
  stage: 'dev',
  // The run's numbers are the Lambdas' defaults too (shared/config/defaults.ts owns them).
  runDeadlineSeconds: DEFAULT_RUN_DEADLINE_SECONDS,
  maxSteps: DEFAULT_LIMITS.maxSteps,
  maxDepth: DEFAULT_LIMITS.maxDepth,
  maxReplans: DEFAULT_MAX_REPLANS,
  webhookSources: [],
  webhookTenants: {},
  notifyUrls: [],
  roles: {
    groupsClaim: DEFAULT_ROLE_CLAIMS.groups,
    scopesClaim: DEFAULT_ROLE_CLAIMS.scopes,
    scopePrefix: DEFAULT_ROLE_CLAIMS.scopePrefix,
    tenantClaim: DEFAULT_ROLE_CLAIMS.tenant,
    routeScopes: true,
  },
  retainData: true,
  retentionDays: DEFAULT_RETENTION_DAYS,
  logRetentionDays: 30,
  apiRateLimit: 50,
  apiBurstLimit: 100,
  archiveRetentionDays: 30,
};

const SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Reads the context keys docs/deploy.md documents; throws on a value that cannot be right. */
export function configFromContext(node: Node): CairnConfig {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    return value === undefined || value === null || value === '' ? undefined : String(value);
  };
  const count = (key: string, fallback: number): number => {
    const raw = text(key);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`context ${key} must be a positive integer, got "${raw}"`);
    return value;
  };
  /** A positive integer, or `none` for no reservation at all. */
  const concurrency = (key: string, fallback: number | undefined): number | undefined => {
    const raw = text(key);
    if (raw === 'none') return undefined;
    return raw === undefined ? fallback : count(key, 1);
  };
  const list = (key: string): string[] => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return [];
    const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
    return items.map((item) => item.trim()).filter((item) => item.length > 0);
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const raw = text(key);
    if (raw === undefined) return fallback;
    if (raw !== 'true' && raw !== 'false') throw new Error(`context ${key} must be true or false, got "${raw}"`);
    return raw === 'true';
  };
  const url = (key: string): string | undefined => {
    const raw = text(key);
    if (raw !== undefined && !/^https:\/\/[^\s/]+/.test(raw) && !/^http:\/\/localhost(:\d+)?(\/|$)/.test(raw))
      throw new Error(`context ${key} must be an https URL, got "${raw}"`);
    return raw;
  };

  const stage = text('stage') ?? DEFAULT_CONFIG.stage;
  if (!/^[a-z0-9-]{1,20}$/.test(stage)) throw new Error(`context stage must match [a-z0-9-]{1,20}, got "${stage}"`);
  const modelId = text('modelId');
  const modelEndpoint = modelEndpointOf(text('modelUrl'), text('model'), text('modelApiKeySecret'), modelId);
  const bindings = parseBindings(node.tryGetContext('bindings'));
  const catalogContext = text('catalogFile');
  const catalogFile = catalogContext === undefined ? undefined : checkedCatalogFile(catalogContext);
  const issuer = url('jwtIssuer');
  const audience = list('jwtAudience');
  if ((issuer === undefined) !== (audience.length === 0))
    throw new Error('context jwtIssuer and jwtAudience go together: give both, or neither for the built-in user pool');
  const oidc = { authorizeUrl: url('oidcAuthorizeUrl'), tokenUrl: url('oidcTokenUrl'), clientId: text('oidcClientId') };
  const consoleOrigin = url('consoleOrigin');
  if (consoleOrigin !== undefined && new URL(consoleOrigin).origin !== consoleOrigin)
    throw new Error(`context consoleOrigin must be an origin (scheme://host[:port]), got "${consoleOrigin}"`);
  const webhookSources = list('webhookSources');
  for (const source of webhookSources) {
    if (!SOURCE_NAME.test(source)) throw new Error(`context webhookSources: "${source}" is not a valid source name`);
  }
  const webhookTenants = parseWebhookTenants(node.tryGetContext('webhookTenants'), webhookSources);
  const notifyUrls = list('notifyUrls');
  for (const target of notifyUrls) {
    if (!/^https:\/\/[^\s/]+/.test(target) || !URL.canParse(target))
      throw new Error(`context notifyUrls: "${target}" is not an https URL`);
  }
  const claimName = (key: string, fallback: string): string => {
    const raw = text(key) ?? fallback;
    if (!/^[\x21-\x7e]{1,128}$/.test(raw)) throw new Error(`context ${key} must be a claim name, got "${raw}"`);
    return raw;
  };
  const roles: RolesConfig = {
    groupsClaim: claimName('roleGroupsClaim', DEFAULT_CONFIG.roles.groupsClaim),
    scopesClaim: claimName('roleScopesClaim', DEFAULT_CONFIG.roles.scopesClaim),
    scopePrefix: claimName('roleScopePrefix', DEFAULT_CONFIG.roles.scopePrefix),
    tenantClaim: claimName('tenantClaim', DEFAULT_CONFIG.roles.tenantClaim),
    routeScopes: flag('routeScopes', DEFAULT_CONFIG.roles.routeScopes),
  };
  const retention = count('logRetentionDays', DEFAULT_CONFIG.logRetentionDays);
  const logRetentionDays = RETENTION_DAYS.find((days) => days === retention);
  if (logRetentionDays === undefined)
    throw new Error(`context logRetentionDays must be one of ${RETENTION_DAYS.join(', ')}, got ${retention}`);
  const alarmTopicArn = text('alarmTopicArn');
  if (alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:/.test(alarmTopicArn))
    throw new Error(`context alarmTopicArn must be an SNS topic ARN, got "${alarmTopicArn}"`);
  const plannerConcurrency = concurrency('plannerConcurrency', DEFAULT_CONFIG.plannerConcurrency);
  const executorConcurrency = concurrency('executorConcurrency', DEFAULT_CONFIG.executorConcurrency);

  return {
    stage,
    runDeadlineSeconds: count('runDeadlineSeconds', DEFAULT_CONFIG.runDeadlineSeconds),
    maxSteps: count('maxSteps', DEFAULT_CONFIG.maxSteps),
    maxDepth: count('maxDepth', DEFAULT_CONFIG.maxDepth),
    maxReplans: count('maxReplans', DEFAULT_CONFIG.maxReplans),
    ...(text('approvalTimeoutSeconds') === undefined
      ? {}
      : { approvalTimeoutSeconds: count('approvalTimeoutSeconds', 1) }),
    ...(text('replanWatchSeconds') === undefined ? {} : { replanWatchSeconds: count('replanWatchSeconds', 1) }),
    ...(text('maxRunningRunsPerTenant') === undefined
      ? {}
      : { maxRunningRunsPerTenant: count('maxRunningRunsPerTenant', 1) }),
    webhookSources: [...new Set(webhookSources)],
    webhookTenants,
    notifyUrls: [...new Set(notifyUrls)],
    roles,
    retainData: flag('retainData', DEFAULT_CONFIG.retainData),
    retentionDays: count('retentionDays', DEFAULT_CONFIG.retentionDays),
    logRetentionDays,
    apiRateLimit: count('apiRateLimit', DEFAULT_CONFIG.apiRateLimit),
    apiBurstLimit: count('apiBurstLimit', DEFAULT_CONFIG.apiBurstLimit),
    archiveRetentionDays: count('archiveRetentionDays', DEFAULT_CONFIG.archiveRetentionDays),
    ...(modelId === undefined ? {} : { modelId }),
    ...(modelEndpoint === undefined ? {} : { modelEndpoint }),
    ...(bindings === undefined ? {} : { bindings }),
    ...(catalogFile === undefined ? {} : { catalogFile }),
    ...(issuer === undefined ? {} : { jwt: { issuer, audience } }),
    ...(oidc.authorizeUrl && oidc.tokenUrl && oidc.clientId
      ? { consoleOidc: { authorizeUrl: oidc.authorizeUrl, tokenUrl: oidc.tokenUrl, clientId: oidc.clientId } }
      : {}),
    ...(consoleOrigin === undefined ? {} : { consoleOrigin }),
    ...(plannerConcurrency === undefined ? {} : { plannerConcurrency }),
    ...(executorConcurrency === undefined ? {} : { executorConcurrency }),
    ...(alarmTopicArn === undefined ? {} : { alarmTopicArn }),
  };
}

/** The planner's OpenAI-compatible endpoint: URL and model together, http(s), and not next to a Bedrock modelId. */
function modelEndpointOf(
  url: string | undefined,
  model: string | undefined,
  apiKeySecret: string | undefined,
  modelId: string | undefined,
): ModelEndpointConfig | undefined {
  if (url === undefined && model === undefined) {
    if (apiKeySecret !== undefined) throw new Error('context modelApiKeySecret needs modelUrl and model');
    return undefined;
  }
  if (url === undefined || model === undefined)
    throw new Error('context modelUrl and model go together: give both, or neither');
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new Error(`context modelUrl must be an http(s) URL, got "${url}"`);
  if (modelId !== undefined)
    throw new Error('context modelId (Bedrock) and modelUrl name two planner models: give one');
  return { url, model, ...(apiKeySecret === undefined ? {} : { apiKeySecret }) };
}

/** The catalog file, checked as the Lambdas will load it; its absolute path (the bundling copies it). */
function checkedCatalogFile(path: string): string {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new Error(`context catalogFile: cannot read ${path}: ${(error as Error).message}`);
  }
  parseCatalog(text);
  return absolute;
}

/**
 * Context webhookTenants: a JSON object (or its text, from `-c`) of source → tenant. Each source must be one of
 * webhookSources: a tenant for a source with no secret names webhooks that are never accepted.
 */
function parseWebhookTenants(value: unknown, sources: readonly string[]): Readonly<Record<string, string>> {
  if (value === undefined || value === null || value === '') return {};
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('context webhookTenants must be a JSON object of source → tenant');
  const tenants: Record<string, string> = {};
  for (const [source, tenant] of Object.entries(parsed)) {
    if (!sources.includes(source))
      throw new Error(`context webhookTenants: "${source}" is not one of webhookSources (${sources.join(', ')})`);
    if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant))
      throw new Error(
        `context webhookTenants: the tenant of "${source}" is not a tenant name: ${JSON.stringify(tenant)}`,
      );
    tenants[source] = tenant;
  }
  return tenants;
}

function parseBindings(value: unknown): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('context bindings must be a JSON object of target → binding');
  }
  // What the step executor will refuse at its first call is refused here, and no credential goes in plaintext.
  deployedBindings(parsed as Record<string, unknown>);
  return parsed as Record<string, unknown>;
}

export const stackName = (stage: string): string => `Cairn-${stage}`;
