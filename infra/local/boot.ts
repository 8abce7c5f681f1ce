/**
 * The embedded stack in one process: dynalite through the real DynamoDB client, the state machines synthesized
 * from the CDK app and run by aws-local-stepfunctions, the in-process bus, and the Hono app on a local port.
 * Handlers are the same `createHandler(deps)` factories the Lambdas use, and their dependencies come from the same
 * composition root (shared/composition/root.ts) with the same settings; only the adapters of the place differ.
 */
import './polyfills.ts';
import './xray-manual-mode.ts';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { createHandler as createCoordinatorHandler } from '../../functions/coordinator.ts';
import { createHandler as createInvalidatorHandler } from '../../functions/invalidator.ts';
import { createHandler as createPlannerHandler } from '../../functions/planner.ts';
import { createHandler as createReplannerHandler } from '../../functions/replanner.ts';
import { asTransient } from '../../functions/root.ts';
import { createHandler as createExecutorHandler } from '../../functions/step-executor.ts';
import { createHandler as createValidatorHandler } from '../../functions/validator.ts';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { type CatalogSource, deploymentCatalog } from '../../shared/adapters/catalog-from-env.ts';
import { type BusEnvelope, createLocalEventBus, type LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { createLocalOutboxStream, type LocalOutboxStream } from '../../shared/adapters/local/outbox-stream.ts';
import { createInProcessPlanJobDispatcher } from '../../shared/adapters/local/plan-job-dispatcher.ts';
import { createMemoryReplayGuard, secretsFrom } from '../../shared/adapters/local/webhooks.ts';
import { createApp } from '../../shared/api/app.ts';
import { conformanceCatalog, ledger, ledgerEntries } from '../../shared/capabilities/conformance.ts';
import demoCatalog from '../../shared/catalog/demo.json' with { type: 'json' };
import { createRoot } from '../../shared/composition/root.ts';
import { DEFAULT_BUILTIN_PACKS, DEFAULT_LOCAL_HOST } from '../../shared/config/defaults.ts';
import { type Settings, settingsFromEnv } from '../../shared/config/settings.ts';
import type { PutEventsLimits } from '../../shared/events/put-events.ts';
import { type Catalog, loadCatalog } from '../../shared/plan/catalog.ts';
import type { Capability, CatalogDocument } from '../../shared/plan/schema.ts';
import type { PlanLimits } from '../../shared/plan/validate.ts';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';
import type { MetricsSink } from '../../shared/ports/metrics.ts';
import type { Store } from '../../shared/ports/store.ts';
import { withLambdaPayloadLimits } from './api-payload-limits.ts';
import { withPutEventsLimits } from './bus-limits.ts';
import { subscribeBusRules } from './bus-rules.ts';
import { type DataDir, openDataDir } from './data-dir.ts';
import { startInProcessDynamo } from './dynalite-in-process.ts';
import { type ExecutionJournal, openExecutionJournal } from './execution-journal.ts';
import { faultsOf } from './faults/config.ts';
import { faultHooks, type LocalStackFaults } from './faults/hooks.ts';
import { LEDGER_FILE, type LedgerFile, openLedgerFile } from './ledger-file.ts';
import { createLocalExecutions, type LocalExecutions, type LocalHandler } from './local-executions.ts';
import { createPlanCheckPool } from './plan-check-pool.ts';
import { type ResumeReport, resumeOpenWork } from './resume.ts';
import { loadStateMachines, type SynthMissReason, type SynthOutcome } from './synth-cache.ts';

export const LOCAL_TABLE_NAME = 'cairn-local';

export interface LocalStackOptions {
  /**
   * Keep the store, the open executions and the conformance ledger in this directory (locked to this process) and
   * carry on the unfinished work found there; absent: everything in memory (tests, benches).
   */
  readonly dataDir?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** The API token; else the settings' (CAIRN_API_TOKEN); else a random one. */
  readonly token?: string | undefined;
  readonly conformance?: boolean;
  /**
   * The settings, by the Lambdas' names (shared/config/settings.ts: CAIRN_MAX_STEPS, CAIRN_TRACE_RETENTION,
   * CAIRN_WEBHOOK_SECRETS, ...); default: read from the process environment. The options below win over them.
   */
  readonly settings?: Settings;
  readonly limits?: Partial<PlanLimits & { maxReplans: number; runDeadlineSeconds: number }>;
  /** Compresses the step machine's retry backoff (tests); absent: the ASL's own seconds. */
  readonly backoffMs?: number;
  /** Compresses every Task's Retry pause (tests, chaos: platform faults retried at once); absent: the ASL's. */
  readonly retryIntervalMs?: number;
  /** Delay of the demo capabilities (ms); tests set 0. */
  readonly demoDelayMs?: number | { min: number; max: number };
  /** Retry delay base in seconds (the Backoff Wait); default: the settings' (CAIRN_RETRY_BASE_SECONDS). */
  readonly retryBaseSeconds?: number;
  /** Count state transitions, Lambda invocations and DynamoDB calls (benchmarks): see `stats()`. */
  readonly instrument?: boolean;
  /** Where execution failures are reported (default: stderr). */
  readonly onExecutionError?: (message: string) => void;
  /**
   * Demo targets whose provider is down (a permanent "provider unavailable" error on every call; the `npm start`
   * demo takes tool:web.search down so the replanner moves to its catalog alternative). Read on every call.
   */
  readonly demoOutage?: ReadonlySet<string>;
  /**
   * Wraps the store every handler uses (tests: a store that fails or crashes at a chosen call, to rehearse what a
   * throttle or a lost answer does between two writes).
   */
  readonly wrapStore?: (store: Store) => Store;
  /**
   * Wraps each Lambda handler the state machines call, by function key (tests: an invocation whose answer is lost
   * after it did its work, a delayed invocation), so Step Functions' own Retry and Catch are what repeats it.
   */
  readonly wrapHandler?: (key: string, handler: LocalHandler) => LocalHandler;
  /** Lambda's concurrency per function key ('StepExecutor', ...): beyond it a Task is throttled (lambda-concurrency.ts). */
  readonly lambdaConcurrency?: Readonly<Record<string, number>>;
  /** Receives the coordinator's and the step runner's operational metrics (tests); none when absent. */
  readonly metrics?: MetricsSink;
  /** More capabilities with their builtin bindings (tests: alternatives the packs do not have). */
  readonly extraCapabilities?: {
    readonly capabilities: readonly Capability[];
    readonly bindings: Readonly<Record<string, CapabilityBinding>>;
  };
  /**
   * Where the synthesized state machines are cached by the hash of their sources (synth-cache.ts); `false`:
   * synthesize on every boot. Default `.cairn/cache` in the working directory.
   */
  readonly synthCacheDir?: string | false;
  /** Told before the state machines are synthesized (a cache miss: seconds), with why. */
  readonly onSynthesize?: (reason: SynthMissReason) => void;
  /** Faults to inject (`point:fault@probability,...`, README "Fault injection"); absent: CAIRN_FAULTS. */
  readonly faults?: string;
  /** Their seed (same seed and spec: same decisions in the same call order); absent: CAIRN_FAULTS_SEED, else random. */
  readonly faultsSeed?: number;
  /** EventBridge's PutEvents limits on the bus (bus-limits.ts); lowered only by tests. */
  readonly putEventsLimits?: PutEventsLimits;
}

/** What a workload cost, in the units AWS bills: counted while `instrument` is on. */
export interface LocalStackStats {
  readonly stateTransitions: number;
  readonly lambdaInvocations: Readonly<Record<string, number>>;
  readonly dynamoWrites: number;
  /** The outbox relay's audit-log batches (BatchWriteItem), apart from the state writes above. */
  readonly auditWrites: number;
  readonly dynamoReads: number;
  /** Items those reads returned or asked for (a BatchGetItem of three keys is one read of three items). */
  readonly dynamoReadItems: number;
}

const DYNAMO_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);
/** Only the outbox relay writes in batches (the audit log): counted apart, off every step's own path. */
const AUDIT_WRITES = new Set(['BatchWriteItemCommand']);
const DYNAMO_READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

/** How many items a read command asked for (batch) or returned (query, scan): what AWS bills reads by, roughly. */
function itemsRead(command: string, input: unknown, output: unknown): number {
  if (command === 'GetItemCommand') return 1;
  if (command === 'BatchGetItemCommand') {
    const tables = Object.values((input as { RequestItems?: Record<string, { Keys?: unknown[] }> }).RequestItems ?? {});
    return tables.reduce((sum, table) => sum + (table.Keys?.length ?? 0), 0);
  }
  return (output as { Count?: number } | undefined)?.Count ?? 0;
}

export interface LocalStack {
  readonly url: string;
  readonly token: string;
  readonly bus: LocalEventBus;
  readonly store: Store;
  readonly catalog: Catalog;
  readonly executions: LocalExecutions;
  /** Whether the state machines came from the synthesis cache or were synthesized, and why. */
  readonly synthesis: SynthOutcome;
  /** The data directory (absent: in memory). */
  readonly dataDir?: string;
  /** What boot carried on from the data directory (empty in memory). */
  readonly resumed: ResumeReport;
  /** The faults injected (absent: none asked for). */
  readonly faults?: LocalStackFaults;
  /** Counts since boot (all zero unless started with `instrument`). */
  stats(): LocalStackStats;
  /** Starts a run through the API, as a client would; returns its id. */
  startRun(body: Readonly<Record<string, unknown>>, headers?: Readonly<Record<string, string>>): Promise<string>;
  /**
   * Resolves when the stack is quiet: no execution moving, every announced event relayed (published and in the
   * audit log) and every bus delivery done.
   */
  settled(): Promise<void>;
  /** Calls the API in process (no socket) with the stack's token. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  close(): Promise<void>;
}

/**
 * The demo catalog, plus the conformance pack when asked for, plus any extra capabilities, plus the ones of the
 * settings' catalog (CAIRN_CATALOG_FILE or CAIRN_CATALOG, e.g. from `cairn catalog import --mcp`), which replace
 * a builtin capability of the same target.
 */
export function localCatalog(
  conformance: boolean,
  extra: readonly Capability[] = [],
  configured: CatalogSource = {},
): Catalog {
  const demo = demoCatalog as unknown as CatalogDocument;
  const packs = conformance ? [...demo.capabilities, ...conformanceCatalog().capabilities] : demo.capabilities;
  const own =
    configured.file === undefined && configured.json === undefined ? [] : deploymentCatalog(configured).capabilities();
  if (extra.length === 0 && !conformance && own.length === 0) return loadCatalog(demo);
  const replaced = new Set(own.map((capability) => capability.target));
  const builtin = [...packs, ...extra].filter((capability) => !replaced.has(capability.target));
  return loadCatalog({ capabilities: [...builtin, ...own] });
}

/**
 * The settings of the embedded runtime: the Lambdas' (shared/config/settings.ts), read from `options.settings` or
 * else the process environment, with the options' own limits, deadline and backoff over them. The builtin packs
 * follow `conformance`; configured bindings (CAIRN_BINDINGS: MCP servers, HTTP endpoints...) are kept and win over
 * the packs for the targets they name.
 */
export function localSettings(options: LocalStackOptions = {}): Settings {
  const base = options.settings ?? settingsFromEnv(process.env);
  const given = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  return {
    ...base,
    limits: {
      maxSteps: given(options.limits?.maxSteps, base.limits.maxSteps),
      maxDepth: given(options.limits?.maxDepth, base.limits.maxDepth),
    },
    run: {
      ...base.run,
      maxReplans: given(options.limits?.maxReplans, base.run.maxReplans),
      runDeadlineSeconds: given(options.limits?.runDeadlineSeconds, base.run.runDeadlineSeconds),
      retryBaseSeconds: given(options.retryBaseSeconds, base.run.retryBaseSeconds),
    },
    capabilities: {
      ...base.capabilities,
      builtins: options.conformance ? ['demo', 'conformance'] : DEFAULT_BUILTIN_PACKS,
    },
  };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const settings = localSettings(options);
  // Before anything opens: a bad spec (E_BAD_FAULTS) stops here.
  const faults = faultsOf(options);
  const token = options.token ?? settings.apiToken ?? randomBytes(18).toString('base64url');

  const counts = {
    stateTransitions: 0,
    dynamoWrites: 0,
    auditWrites: 0,
    dynamoReads: 0,
    dynamoReadItems: 0,
    lambda: {} as Record<string, number>,
  };
  // The lock first: a second process on the directory stops here, before it opens anything the first one uses.
  const data: DataDir | undefined = options.dataDir === undefined ? undefined : openDataDir(options.dataDir);
  let journal: ExecutionJournal | undefined;
  let ledgerFile: LedgerFile | undefined;
  const dynamo = await startInProcessDynamo({
    tableName: LOCAL_TABLE_NAME,
    ...(data ? { path: join(data.dir, 'store') } : {}),
    ...(options.instrument
      ? {
          onCommand: (command: string, input: unknown, output: unknown) => {
            if (DYNAMO_WRITES.has(command)) counts.dynamoWrites += 1;
            if (AUDIT_WRITES.has(command)) counts.auditWrites += 1;
            if (DYNAMO_READS.has(command)) {
              counts.dynamoReads += 1;
              counts.dynamoReadItems += itemsRead(command, input, output);
            }
          },
        }
      : {}),
  }).catch((error: unknown) => {
    data?.release();
    throw error;
  });
  // The table's change stream, as DynamoDB Streams would deliver it: every announcing write goes to the relay.
  let outbox: LocalOutboxStream | undefined;
  const dynamoStore = createDynamoStore({
    client: dynamo.client,
    tableName: LOCAL_TABLE_NAME,
    stream: (record) => outbox?.accept(record),
  });
  const hooks = faultHooks(faults, { client: dynamo.client, stream: (record) => outbox?.accept(record) });
  const store = options.wrapStore ? options.wrapStore(dynamoStore) : dynamoStore;
  const catalog = localCatalog(options.conformance === true, options.extraCapabilities?.capabilities, settings.catalog);
  const onBusError = (error: unknown, event: BusEnvelope) =>
    process.stderr.write(`cairn: a bus subscriber failed on ${event['detail-type']}: ${String(error)}\n`);
  const bus = hooks.bus(
    withPutEventsLimits(createLocalEventBus({ onError: onBusError }), undefined, options.putEventsLimits),
    onBusError,
  );
  const { maxReplans, runDeadlineSeconds } = settings.run;
  const { machines, outcome: synthesis } = await loadStateMachines(
    { ...settings.limits, maxReplans, runDeadlineSeconds },
    {
      ...(options.synthCacheDir === undefined ? {} : { cacheDir: options.synthCacheDir }),
      ...(options.onSynthesize === undefined ? {} : { onSynthesize: options.onSynthesize }),
    },
  );

  // Handlers and executions refer to each other (the coordinator starts executions that call handlers): the
  // executions get late-bound entries that reach the real handlers once they exist.
  const handlers: Record<string, LocalHandler> = {};
  const lateBound =
    (key: string): LocalHandler =>
    (payload) => {
      if (options.instrument) counts.lambda[key] = (counts.lambda[key] ?? 0) + 1;
      const handler = handlers[key];
      if (!handler) throw new Error(`no local handler for ${key}`);
      // As a Lambda entry does (functions/root.ts lazyHandler): a retryable cairn error leaves the function as
      // TransientError, the name the machines' Retry matches, so a throttled model or store is retried here too.
      return handler(payload).catch((error: unknown) => {
        throw asTransient(error);
      });
    };
  if (data) journal = openExecutionJournal(join(data.dir, 'executions.jsonl'));
  if (data && options.conformance) {
    ledgerFile = openLedgerFile(join(data.dir, LEDGER_FILE));
    ledger.keepIn(ledgerFile);
  }
  const executions = createLocalExecutions({
    ...(journal ? { journal } : {}),
    definitions: { run: machines.run, step: machines.step },
    functionOf: machines.functionOf,
    handlers: Object.fromEntries(
      ['Planner', 'Validator', 'Coordinator', 'StepExecutor', 'Api'].map((key) => [key, lateBound(key)]),
    ),
    ...(options.backoffMs === undefined ? {} : { backoffMs: options.backoffMs }),
    ...(options.lambdaConcurrency === undefined ? {} : { concurrency: options.lambdaConcurrency }),
    ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
    ...(options.instrument
      ? {
          onStateEntered: () => {
            counts.stateTransitions += 1;
          },
        }
      : {}),
    ...(options.onExecutionError
      ? {
          onError: (error: Error, info: { machine: string; name: string }) =>
            options.onExecutionError?.(`${info.machine} execution ${info.name} failed: ${error.message}`),
        }
      : {}),
  });

  // The one composition root, with this place's adapters: the same services the Lambdas build.
  const { metrics, extraCapabilities } = options;
  const demo = {
    ...(options.demoDelayMs === undefined ? {} : { delayMs: options.demoDelayMs }),
    ...(options.demoOutage === undefined ? {} : { outage: options.demoOutage }),
  };
  const root = createRoot(settings, {
    store: () => store,
    // The relay reads the table's stream itself, below any wrapper the tests put around the handlers' store.
    relayStore: () => dynamoStore,
    executions: () => hooks.executions(executions),
    events: () => bus,
    catalog: () => catalog,
    webhookSecrets: () => secretsFrom(settings.webhooks.secrets),
    replayGuard: (_store, clock) => createMemoryReplayGuard({ clock }),
    // Planning jobs run after the request, through the same handlers the deployed dispatcher invokes.
    planJobDispatcher: () => planJobs,
    ...(metrics === undefined ? {} : { metrics: () => metrics }),
    // Extra bindings win over the demo pack's generated placeholders for the same targets.
    capabilities: {
      demo,
      ...(extraCapabilities === undefined ? {} : { extra: extraCapabilities.bindings }),
      wrap: hooks.registry,
    },
  });
  outbox = createLocalOutboxStream(root.relay);
  const stream = outbox;

  const wrapOwn = options.wrapHandler ?? ((_key: string, handler: LocalHandler) => handler);
  const wrapHandler = (key: string, handler: LocalHandler) => hooks.handler(key, wrapOwn(key, handler));
  const planJobs = createInProcessPlanJobDispatcher({
    plan: (payload) => handlers.Planner?.(payload) ?? Promise.reject(new Error('the planner is not ready')),
    replan: (payload) => replannerHandler(payload),
  });
  Object.assign(handlers, {
    Planner: wrapHandler(
      'Planner',
      createPlannerHandler({ store: root.store, planner: root.planner, clock: root.clock }) as LocalHandler,
    ),
    Validator: wrapHandler(
      'Validator',
      createValidatorHandler({ store: root.store, catalog: root.catalog, limits: root.limits }) as LocalHandler,
    ),
    Coordinator: wrapHandler(
      'Coordinator',
      createCoordinatorHandler({ coordinator: root.coordinator }) as LocalHandler,
    ),
    StepExecutor: wrapHandler('StepExecutor', createExecutorHandler({ runner: root.runner }) as LocalHandler),
  });
  const replannerHandler = createReplannerHandler({
    replanner: root.replanner,
    jobs: { store: root.store, clock: root.clock },
  });
  // The rules that drive cairn, matched in process with the deployed patterns (BUS_RULES).
  subscribeBusRules(bus, {
    Replanner: replannerHandler,
    Invalidator: createInvalidatorHandler({ invalidator: root.invalidator }),
  });

  // Large plan bodies are decoded and validated in worker threads: this event loop also answers /health.
  const planChecks = createPlanCheckPool({ catalog: root.catalog, limits: root.limits });
  const app = createApp({
    ...root.apiDeps({
      auth: { kind: 'token', token },
      ...(options.conformance ? { ledger: { entries: () => ledgerEntries() } } : {}),
    }),
    planChecks,
  });
  // API Gateway and the API Lambda between the client and the app, with Lambda's 6 MB each way.
  const api = withLambdaPayloadLimits(app.fetch);
  const host = options.host ?? DEFAULT_LOCAL_HOST;
  const server = serve({ fetch: api, port: options.port ?? 0, hostname: host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const resumed = data ? await resumeOpenWork(executions, store) : { executions: [], started: [] };
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const request = async (method: string, path: string, body?: unknown) => {
    const response = await api(
      new Request(new URL(path, 'http://localhost'), {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as unknown) : undefined };
  };

  return {
    url,
    token,
    bus,
    store,
    catalog,
    executions,
    synthesis,
    ...(data ? { dataDir: data.dir } : {}),
    resumed,
    ...(hooks.report ? { faults: hooks.report } : {}),
    request,
    stats: () => ({
      stateTransitions: counts.stateTransitions,
      lambdaInvocations: { ...counts.lambda },
      dynamoWrites: counts.dynamoWrites,
      auditWrites: counts.auditWrites,
      dynamoReads: counts.dynamoReads,
      dynamoReadItems: counts.dynamoReadItems,
    }),
    async startRun(body, headers = {}) {
      const response = await app.request('/runs', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as { runId?: string; error?: { message?: string } };
      if (response.status !== 202 || !json.runId)
        throw new Error(`POST /runs answered ${response.status}: ${json.error?.message ?? JSON.stringify(json)}`);
      return json.runId;
    },
    async settled() {
      // Each may start work in another (a step announces events, a bus rule starts executions): a few passes.
      for (let pass = 0; pass < 3; pass++) {
        await planJobs.idle();
        await executions.idle();
        await stream.drain();
        await bus.drain();
      }
    },
    async close() {
      executions.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await planChecks.close();
      // A planning job under way finishes on the store before the store goes.
      await planJobs.idle();
      await stream.drain();
      await bus.drain();
      // MCP servers' connections and child processes: a stdio server would otherwise outlive the stack.
      await root.close();
      await dynamo.stop();
      await root.expressions.close();
      journal?.close();
      if (ledgerFile) {
        ledger.keepIn(undefined);
        ledgerFile.close();
      }
      data?.release();
    },
  };
}
