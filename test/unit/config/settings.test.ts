/**
 * The one settings parser: every CAIRN_* variable at its default when absent or blank, the values the Lambdas'
 * environments carry, and for each bad value a SettingsError that names the variable (all bad ones at once).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DECISION_WAIT_MS,
  DEFAULT_EXPRESSION_LIMITS,
  DEFAULT_EXPRESSION_WORKERS,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_LIMITS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_REPLANS,
  DEFAULT_REPLAY_WINDOW_SECONDS,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_RETRY_BASE_SECONDS,
  DEFAULT_RETRY_CAP_SECONDS,
  DEFAULT_RUN_DEADLINE_SECONDS,
  DEFAULT_TRACE_RETENTION,
} from '../../../shared/config/defaults.ts';
import {
  defaultSettings,
  isSettingsError,
  requireSetting,
  SETTINGS_VARIABLES,
  type SettingsError,
  settingsFromEnv,
} from '../../../shared/config/settings.ts';

const thrown = (run: () => unknown): SettingsError => {
  try {
    run();
  } catch (error) {
    if (isSettingsError(error)) return error;
    throw error;
  }
  throw new Error('expected a SettingsError');
};

describe('settingsFromEnv', () => {
  it('gives every default when nothing is set', () => {
    expect(settingsFromEnv({})).toEqual({
      aws: {
        tableName: undefined,
        runMachineArn: undefined,
        stepMachineArn: undefined,
        eventBusName: undefined,
        plannerFunctionName: undefined,
        replannerFunctionName: undefined,
      },
      catalog: { file: undefined, json: undefined },
      limits: { maxSteps: DEFAULT_LIMITS.maxSteps, maxDepth: DEFAULT_LIMITS.maxDepth },
      run: {
        runDeadlineSeconds: DEFAULT_RUN_DEADLINE_SECONDS,
        retryBaseSeconds: DEFAULT_RETRY_BASE_SECONDS,
        retryCapSeconds: DEFAULT_RETRY_CAP_SECONDS,
        traceRetention: DEFAULT_TRACE_RETENTION,
        maxReplans: DEFAULT_MAX_REPLANS,
      },
      maxRunningRunsPerTenant: Number.POSITIVE_INFINITY,
      retentionSeconds: DEFAULT_RETENTION_DAYS * 86_400,
      plannerModelId: undefined,
      plannerEndpoint: undefined,
      capabilities: {
        bindings: {},
        builtins: ['demo'],
        maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
        idempotencyTtlSeconds: DEFAULT_IDEMPOTENCY_TTL_SECONDS,
        prices: {},
      },
      decisionWaitMs: DEFAULT_DECISION_WAIT_MS,
      apiToken: undefined,
      apiTokensFile: undefined,
      roleClaims: { groups: 'cognito:groups', scopes: 'scope', scopePrefix: 'cairn/', tenant: 'custom:tenant' },
      webhooks: {
        secretPrefix: undefined,
        secrets: new Map(),
        replayWindowSeconds: DEFAULT_REPLAY_WINDOW_SECONDS,
        tenants: new Map(),
      },
      console: { oidc: undefined, apiBase: undefined, dir: undefined },
      expressions: { limits: DEFAULT_EXPRESSION_LIMITS, workers: DEFAULT_EXPRESSION_WORKERS, workerFile: undefined },
      notify: {
        urls: [],
        secret: undefined,
        secretArn: undefined,
        consoleUrl: undefined,
        scheduleGroup: undefined,
        schedulerRoleArn: undefined,
      },
    });
    expect(defaultSettings()).toEqual(settingsFromEnv({}));
  });

  it('has the defaults the deployment documents', () => {
    // The numbers themselves, once: everything else imports them.
    expect(DEFAULT_RUN_DEADLINE_SECONDS).toBe(86_400);
    expect(DEFAULT_LIMITS).toEqual({ maxSteps: 64, maxDepth: 16 });
    expect([DEFAULT_MAX_REPLANS, DEFAULT_RETRY_BASE_SECONDS, DEFAULT_RETRY_CAP_SECONDS]).toEqual([3, 1, 60]);
    expect(DEFAULT_EXPRESSION_LIMITS.timeoutMs).toBe(1000);
    expect(DEFAULT_RETENTION_DAYS).toBe(90);
  });

  it('counts a blank variable as absent, as CDK and shells leave it', () => {
    const blank = Object.fromEntries(SETTINGS_VARIABLES.map((name) => [name, '  ']));
    expect(settingsFromEnv(blank)).toEqual(settingsFromEnv({}));
  });

  it('reads the values the Lambdas are given, and ignores other variables', () => {
    const settings = settingsFromEnv({
      CAIRN_TABLE_NAME: 'cairn-prod',
      CAIRN_RUN_MACHINE_ARN: 'arn:run',
      CAIRN_STEP_MACHINE_ARN: 'arn:step',
      CAIRN_EVENT_BUS_NAME: 'bus',
      CAIRN_CATALOG_FILE: '/var/task/catalog.json',
      CAIRN_MAX_STEPS: '10',
      CAIRN_MAX_DEPTH: '3',
      CAIRN_RUN_DEADLINE_SECONDS: '600.9',
      CAIRN_RETRY_BASE_SECONDS: '0.5',
      CAIRN_RETRY_CAP_SECONDS: '0',
      CAIRN_TRACE_RETENTION: 'full',
      CAIRN_MAX_REPLANS: '0',
      CAIRN_MAX_RUNNING_RUNS_PER_TENANT: '4',
      CAIRN_RETENTION_DAYS: '30',
      CAIRN_APPROVAL_TIMEOUT_SECONDS: '30.5',
      CAIRN_REPLAN_WATCH_SECONDS: '90.5',
      CAIRN_MODEL_ID: 'model-a',
      CAIRN_BINDINGS: JSON.stringify({ 'tool:web.search': { kind: 'http', url: 'https://search.example.com' } }),
      CAIRN_BUILTINS: 'demo, conformance',
      CAIRN_MAX_OUTPUT_BYTES: '1000',
      CAIRN_IDEMPOTENCY_TTL_SECONDS: '60',
      CAIRN_PRICES: '{"model-a":{"inputPerMillion":3,"outputPerMillion":15}}',
      CAIRN_API_TOKEN: 's3cret',
      CAIRN_WEBHOOK_SECRET_PREFIX: 'cairn/prod/webhooks',
      CAIRN_WEBHOOK_SECRETS: '{"prices":"p"}',
      CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS: '120',
      CAIRN_CONSOLE_OIDC_AUTHORIZE_URL: 'https://id.example.com/authorize',
      CAIRN_CONSOLE_OIDC_TOKEN_URL: 'https://id.example.com/token',
      CAIRN_CONSOLE_OIDC_CLIENT_ID: 'console',
      CAIRN_CONSOLE_OIDC_TOKEN: 'id',
      CAIRN_CONSOLE_API_BASE: 'https://api.example.com//',
      CAIRN_CONSOLE_DIR: '/var/task/console',
      CAIRN_EXPRESSION_TIMEOUT_MS: '250',
      CAIRN_EXPRESSION_MEMORY_MB: '64',
      CAIRN_EXPRESSION_WORKERS: '3',
      CAIRN_EXPRESSION_WORKER: '/var/task/expression-worker.mjs',
      PATH: '/usr/bin',
    });
    expect(settings).toEqual({
      aws: {
        tableName: 'cairn-prod',
        runMachineArn: 'arn:run',
        stepMachineArn: 'arn:step',
        eventBusName: 'bus',
        plannerFunctionName: undefined,
        replannerFunctionName: undefined,
      },
      catalog: { file: '/var/task/catalog.json', json: undefined },
      limits: { maxSteps: 10, maxDepth: 3 },
      run: {
        runDeadlineSeconds: 600,
        retryBaseSeconds: 0.5,
        retryCapSeconds: 0,
        traceRetention: 'full',
        maxReplans: 0,
        approvalTimeoutSeconds: 30,
        replanWatchSeconds: 90,
      },
      maxRunningRunsPerTenant: 4,
      retentionSeconds: 30 * 86_400,
      plannerModelId: 'model-a',
      capabilities: {
        bindings: { 'tool:web.search': { kind: 'http', url: 'https://search.example.com' } },
        builtins: ['demo', 'conformance'],
        maxOutputBytes: 1000,
        idempotencyTtlSeconds: 60,
        prices: { 'model-a': { inputPerMillion: 3, outputPerMillion: 15 } },
      },
      decisionWaitMs: DEFAULT_DECISION_WAIT_MS,
      apiToken: 's3cret',
      apiTokensFile: undefined,
      roleClaims: { groups: 'cognito:groups', scopes: 'scope', scopePrefix: 'cairn/', tenant: 'custom:tenant' },
      webhooks: {
        secretPrefix: 'cairn/prod/webhooks',
        secrets: new Map([['prices', 'p']]),
        replayWindowSeconds: 120,
        tenants: new Map(),
      },
      console: {
        oidc: {
          authorizeUrl: 'https://id.example.com/authorize',
          tokenUrl: 'https://id.example.com/token',
          clientId: 'console',
          scope: 'openid',
          tokenField: 'id_token',
        },
        apiBase: 'https://api.example.com',
        dir: '/var/task/console',
      },
      expressions: {
        limits: { ...DEFAULT_EXPRESSION_LIMITS, timeoutMs: 250, memoryMb: 64 },
        workers: 3,
        workerFile: '/var/task/expression-worker.mjs',
      },
      notify: {
        urls: [],
        secret: undefined,
        secretArn: undefined,
        consoleUrl: undefined,
        scheduleGroup: undefined,
        schedulerRoleArn: undefined,
      },
    });
  });

  it('names the planner model by either variable, CAIRN_PLANNER_MODEL_ID first', () => {
    expect(settingsFromEnv({ CAIRN_MODEL_ID: 'm1' }).plannerModelId).toBe('m1');
    expect(settingsFromEnv({ CAIRN_PLANNER_MODEL_ID: 'm2', CAIRN_MODEL_ID: 'm1' }).plannerModelId).toBe('m2');
  });

  it('names an OpenAI-compatible planner by CAIRN_MODEL_URL and CAIRN_MODEL, with its key when given', () => {
    expect(
      settingsFromEnv({ CAIRN_MODEL_URL: 'http://localhost:11434/v1', CAIRN_MODEL: 'llama3.1' }).plannerEndpoint,
    ).toEqual({ baseUrl: 'http://localhost:11434/v1', model: 'llama3.1', apiKey: undefined, apiKeySecret: undefined });
    expect(
      settingsFromEnv({
        CAIRN_MODEL_URL: 'https://api.example.com/v1',
        CAIRN_MODEL: 'm',
        CAIRN_MODEL_API_KEY: 'sk-1',
        CAIRN_MODEL_API_KEY_SECRET: 'cairn/prod/model',
      }).plannerEndpoint,
    ).toEqual({ baseUrl: 'https://api.example.com/v1', model: 'm', apiKey: 'sk-1', apiKeySecret: 'cairn/prod/model' });
  });

  it.each([
    [{ CAIRN_MODEL_URL: 'http://localhost:11434/v1' }, 'CAIRN_MODEL'],
    [{ CAIRN_MODEL: 'llama3.1' }, 'CAIRN_MODEL_URL'],
    [{ CAIRN_MODEL_URL: 'localhost:11434', CAIRN_MODEL: 'llama3.1' }, 'CAIRN_MODEL_URL'],
    [{ CAIRN_MODEL_URL: 'ftp://models.example.com', CAIRN_MODEL: 'm' }, 'CAIRN_MODEL_URL'],
    [
      { CAIRN_MODEL_URL: 'https://api.example.com/v1', CAIRN_MODEL: 'm', CAIRN_MODEL_ID: 'bedrock-model' },
      'CAIRN_MODEL_URL',
    ],
  ])('refuses a half or conflicting planner endpoint %j, naming %s', (env, variable) => {
    expect(thrown(() => settingsFromEnv(env)).variables).toEqual([variable]);
  });

  it('keeps a retention of days as whole seconds, at least one', () => {
    expect(settingsFromEnv({ CAIRN_RETENTION_DAYS: '7' }).retentionSeconds).toBe(7 * 86_400);
    expect(settingsFromEnv({ CAIRN_RETENTION_DAYS: '0.5' }).retentionSeconds).toBe(43_200);
    expect(settingsFromEnv({ CAIRN_RETENTION_DAYS: '0.000001' }).retentionSeconds).toBe(1);
  });

  it('turns every builtin pack off with `none`', () => {
    expect(settingsFromEnv({ CAIRN_BUILTINS: 'none' }).capabilities.builtins).toEqual([]);
  });

  it.each([
    ['CAIRN_MAX_STEPS', ['0', '-1', '2.5', 'ten'], /must be a positive integer/],
    ['CAIRN_MAX_DEPTH', ['0', 'deep'], /must be a positive integer/],
    ['CAIRN_RUN_DEADLINE_SECONDS', ['0', '-5', 'a day', 'Infinity'], /must be a number of seconds ≥ 1/],
    ['CAIRN_APPROVAL_TIMEOUT_SECONDS', ['0', 'an hour', 'Infinity'], /must be a number of seconds ≥ 1/],
    ['CAIRN_REPLAN_WATCH_SECONDS', ['0', 'soon'], /must be a number of seconds ≥ 1/],
    ['CAIRN_RETRY_BASE_SECONDS', ['-1', 'soon'], /must be a non-negative number/],
    ['CAIRN_RETRY_CAP_SECONDS', ['-0.5', 'NaN'], /must be a non-negative number/],
    ['CAIRN_TRACE_RETENTION', ['some', 'LAST'], /must be "last" or "full"/],
    ['CAIRN_MAX_REPLANS', ['many', '-1'], /must be a non-negative number/],
    ['CAIRN_MAX_RUNNING_RUNS_PER_TENANT', ['0', '2.5', 'Infinity', 'all'], /must be a positive integer/],
    ['CAIRN_RETENTION_DAYS', ['0', '-1', 'forever', 'Infinity'], /must be a number of days > 0/],
    [
      'CAIRN_BINDINGS',
      ['{nope', '[]', '{"tool:x":{"kind":"carrier-pigeon"}}'],
      /CAIRN_BINDINGS (is not JSON|is invalid)/,
    ],
    ['CAIRN_BUILTINS', ['demo,extra'], /unknown builtin capability pack "extra"/],
    ['CAIRN_MAX_OUTPUT_BYTES', ['0', '1.5', 'big'], /must be a positive integer/],
    ['CAIRN_IDEMPOTENCY_TTL_SECONDS', ['0', 'forever'], /must be a positive integer/],
    [
      'CAIRN_WEBHOOK_SECRETS',
      ['not json', '["a"]', '"text"', '{"prices":""}', '{"prices":42}'],
      /JSON object|non-empty/,
    ],
    ['CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS', ['0', '-5', '1.5', 'ten', '86401', 'soon'], /integer in 1\.\.86400/],
    ['CAIRN_CONSOLE_API_BASE', ['api.example.com', 'http://api.example.com'], /absolute URL|https URL/],
    ['CAIRN_CONSOLE_OIDC_TOKEN', ['refresh'], /must be "access" or "id"/],
  ])('refuses a bad %s with an error naming it', (variable, values, why) => {
    for (const value of values) {
      const error = thrown(() => settingsFromEnv({ [variable]: value }));
      expect(error.name).toBe('SettingsError');
      expect(error.retryable).toBe(false);
      expect(error.variables, value).toEqual([variable]);
      expect(error.message, value).toMatch(new RegExp(`^${variable}\\b`));
      expect(error.message, value).toMatch(why);
    }
  });

  it('reports every bad variable at once', () => {
    const error = thrown(() =>
      settingsFromEnv({ CAIRN_MAX_STEPS: 'ten', CAIRN_TRACE_RETENTION: 'some', CAIRN_MAX_REPLANS: 'many' }),
    );
    expect(error.variables).toEqual(['CAIRN_MAX_STEPS', 'CAIRN_TRACE_RETENTION', 'CAIRN_MAX_REPLANS']);
    expect(error.message).toBe(
      'CAIRN_MAX_STEPS must be a positive integer, got "ten"; CAIRN_TRACE_RETENTION must be "last" or "full", ' +
        'got "some"; CAIRN_MAX_REPLANS must be a non-negative number, got "many"',
    );
  });

  it('configures the console’s OIDC provider whole or not at all, over https (http for loopback only)', () => {
    const oidc = {
      CAIRN_CONSOLE_OIDC_AUTHORIZE_URL: 'http://127.0.0.1:9000/authorize',
      CAIRN_CONSOLE_OIDC_TOKEN_URL: 'http://localhost:9000/token',
      CAIRN_CONSOLE_OIDC_CLIENT_ID: 'console',
    };
    expect(settingsFromEnv(oidc).console.oidc).toMatchObject({ scope: 'openid', tokenField: 'access_token' });

    const half = thrown(() => settingsFromEnv({ CAIRN_CONSOLE_OIDC_CLIENT_ID: 'c' }));
    expect(half.variables).toEqual(['CAIRN_CONSOLE_OIDC_AUTHORIZE_URL', 'CAIRN_CONSOLE_OIDC_TOKEN_URL']);
    expect(half.message).toMatch(/^CAIRN_CONSOLE_OIDC_AUTHORIZE_URL is not set: console OIDC needs .* together/);

    const plain = thrown(() => settingsFromEnv({ ...oidc, CAIRN_CONSOLE_OIDC_TOKEN_URL: 'http://id.example.com/t' }));
    expect(plain.variables).toEqual(['CAIRN_CONSOLE_OIDC_TOKEN_URL']);
    expect(plain.message).toMatch(/must be an https URL/);
  });

  it('reads the tokens file and where a JWT holds its roles, and refuses a tokens file next to the one token', () => {
    const settings = settingsFromEnv({
      CAIRN_TOKENS_FILE: '/etc/cairn/tokens.json',
      CAIRN_ROLE_GROUPS_CLAIM: 'groups',
      CAIRN_ROLE_SCOPES_CLAIM: 'scp',
      CAIRN_ROLE_SCOPE_PREFIX: 'api://cairn/',
    });
    expect(settings.apiTokensFile).toBe('/etc/cairn/tokens.json');
    expect(settings.roleClaims).toEqual({
      groups: 'groups',
      scopes: 'scp',
      scopePrefix: 'api://cairn/',
      tenant: 'custom:tenant',
    });
    expect(() => settingsFromEnv({ CAIRN_TOKENS_FILE: '/etc/cairn/tokens.json', CAIRN_API_TOKEN: 's3cret' })).toThrow(
      /CAIRN_TOKENS_FILE and CAIRN_API_TOKEN are both set/,
    );
  });

  it('keeps a webhook source named like an Object property only as a key', () => {
    const { secrets } = settingsFromEnv({ CAIRN_WEBHOOK_SECRETS: '{"__proto__":"x","prices":"p"}' }).webhooks;
    expect([...secrets]).toEqual([
      ['__proto__', 'x'],
      ['prices', 'p'],
    ]);
    expect(secrets.get('constructor')).toBeUndefined();
  });
});

describe('requireSetting', () => {
  it('answers a setting an adapter needs, or fails naming its variable', () => {
    const settings = settingsFromEnv({ CAIRN_TABLE_NAME: 't' });
    expect(requireSetting(settings, 'tableName')).toBe('t');
    for (const [key, variable] of [
      ['runMachineArn', 'CAIRN_RUN_MACHINE_ARN'],
      ['stepMachineArn', 'CAIRN_STEP_MACHINE_ARN'],
      ['eventBusName', 'CAIRN_EVENT_BUS_NAME'],
    ] as const) {
      const error = thrown(() => requireSetting(settings, key));
      expect(error.message).toBe(`${variable} is not set`);
      expect(error.variables).toEqual([variable]);
    }
  });
});
