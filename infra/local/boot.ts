/**
 * The embedded stack in one process: dynalite through the real DynamoDB client, the state machines synthesized
 * from the CDK app and run by aws-local-stepfunctions, the in-process bus, and the Hono app on a local port.
 * Handlers are the same `createHandler(deps)` factories the Lambdas use, and their dependencies come from the same
 * composition root (shared/composition/root.ts) with the same settings; only the adapters of the place differ.
 */
import { DEFAULT_TENANT } from '../../shared/config/defaults.ts';
import { terminalLine } from '../../shared/terminal-text.ts';
import './polyfills.ts';
import './xray-manual-mode.ts';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHandler as createCoordinatorHandler } from '../../functions/coordinator.ts';
import { createHandler as createInvalidatorHandler } from '../../functions/invalidator.ts';
import { createHandler as createPlannerHandler } from '../../functions/planner.ts';
import { createHandler as createReplannerHandler } from '../../functions/replanner.ts';
import { asTransient } from '../../functions/root.ts';
import { createHandler as createExecutorHandler } from '../../functions/step-executor.ts';
import { createHandler as createValidatorHandler } from '../../functions/validator.ts';
import {
  createDynamoRetentionOf,
  createDynamoRunLogOf,
  createDynamoStore,
} from '../../shared/adapters/aws/dynamo-store.ts';
import { createStoreReplayGuard } from '../../shared/adapters/aws/webhook-replay-guard.ts';
import { type BusEnvelope, createLocalEventBus, type LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { createLocalMailbox, type LocalMailbox } from '../../shared/adapters/local/mailbox.ts';
import type { LocalOutboxStream, LocalRedriveReport } from '../../shared/adapters/local/outbox-stream.ts';
import { createInProcessPlanJobDispatcher } from '../../shared/adapters/local/plan-job-dispatcher.ts';
import { createLocalTimers, type LocalTimers } from '../../shared/adapters/local/timers.ts';
import { createMemoryReplayGuard, secretsFrom } from '../../shared/adapters/local/webhooks.ts';
import { createApp } from '../../shared/api/app.ts';
import { ledger, ledgerEntries } from '../../shared/capabilities/conformance.ts';
import { createRoot } from '../../shared/composition/root.ts';
import { DEFAULT_LOCAL_HOST } from '../../shared/config/defaults.ts';
import type { Catalog } from '../../shared/plan/catalog.ts';
import type { Mailbox } from '../../shared/ports/mailbox.ts';
import type { Store } from '../../shared/ports/store.ts';
import { withLambdaPayloadLimits } from './api-payload-limits.ts';
import { withPutEventsLimits } from './bus-limits.ts';
import { subscribeBusRules } from './bus-rules.ts';
import { type DataDir, openDataDir } from './data-dir.ts';
import { startInProcessDynamo } from './dynalite-in-process.ts';
import { type ExecutionJournal, openExecutionJournal } from './execution-journal.ts';
import { faultsOf } from './faults/config.ts';
import { faultHooks, type LocalStackFaults } from './faults/hooks.ts';
import { serveApi, serverTimeouts } from './http-server.ts';
import { LEDGER_FILE, type LedgerFile, openLedgerFile } from './ledger-file.ts';
import { createLocalExecutions, type LocalExecutions, type LocalHandler } from './local-executions.ts';
import { openMailboxJournal } from './mailbox-journal.ts';
import { startLocalNotifier } from './notify.ts';
import { startLocalOutbox } from './outbox-sweep.ts';
import { createPlanCheckPool } from './plan-check-pool.ts';
import { type AwsQuotas, quotasFromEnv, startPacingWithin } from './quotas/aws-quotas.ts';
import { type StackQuotas, stackQuotas } from './quotas/stack-quotas.ts';
import { countDeferredStarts } from './quotas/throttle-counter.ts';
import { type ResumeReport, resumeOpenWork } from './resume.ts';
import { type SweepReport, startRetentionSweep, sweepExpired } from './retention-sweep.ts';
import { localAuth } from './stack/auth.ts';
import { type LocalStackOptions, localCatalog, localSettings } from './stack/config.ts';
import { type LocalStackStats, stackCounters } from './stack/instrument.ts';
import { loadStateMachines, type SynthOutcome } from './synth-cache.ts';

export type { LocalStackOptions } from './stack/config.ts';
export type { LocalStackStats } from './stack/instrument.ts';

export const LOCAL_TABLE_NAME = 'cairn-local';
/** How often the embedded event feed reads a followed run's log for what is new: a query of an empty range. */
const LOCAL_FEED_POLL_MS = 100;

export interface LocalStack {
  readonly url: string;
  /** The token the stack's own requests carry: the one token, or a tokens file entry that may start runs. */
  readonly token: string;
  /** The tokens file's people, when the stack has one (`--tokens`, CAIRN_TOKENS_FILE). */
  readonly callers?: readonly { readonly subject: string; readonly roles: readonly string[] }[];
  readonly bus: LocalEventBus;
  readonly store: Store;
  readonly catalog: Catalog;
  readonly executions: LocalExecutions;
  /** The runs' mailboxes: the one way in to each run's decider. */
  readonly mailbox: Mailbox;
  /** Whether the state machines came from the synthesis cache or were synthesized, and why. */
  readonly synthesis: SynthOutcome;
  /** The data directory (absent: in memory). */
  readonly dataDir?: string;
  /** What boot carried on from the data directory (empty in memory). */
  readonly resumed: ResumeReport;
  /** The faults injected (absent: none asked for). */
  readonly faults?: LocalStackFaults;
  /** The account quotas rehearsed (absent: none asked for). */
  readonly quotas?: AwsQuotas;
  /**
   * Counts since boot (all zero unless started with `instrument`), and the throttles each quota gave (empty without
   * quotas).
   */
  stats(): LocalStackStats & { readonly throttles: Readonly<Record<string, number>> };
  /** Starts a run through the API, as a client would; returns its id. */
  startRun(body: Readonly<Record<string, unknown>>, headers?: Readonly<Record<string, string>>): Promise<string>;
  /**
   * Resolves when the stack is quiet: no execution moving, every announced event relayed (published and in the
   * audit log) and every bus delivery done.
   */
  settled(): Promise<void>;
  /** Calls the API in process (no socket) with the stack's token. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
  /**
   * Sweeps expired records now, as the runtime does every hour (retention-sweep.ts), as of `at` (default: now): the
   * embedded stand-in for DynamoDB's TTL.
   */
  sweepRetention(at?: Date): Promise<SweepReport>;
  /** One pass of the outbox redrive now (outbox-sweep.ts): relays again the batches the stream kept after its tries. */
  redriveOutbox(): Promise<LocalRedriveReport>;
  close(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const settings = localSettings(options);
  // Before anything opens: a bad spec (E_BAD_FAULTS) stops here.
  const faults = faultsOf(options);
  const timeouts = serverTimeouts(options.serverTimeouts);
  // Before anything opens, as a bad fault spec: a bad tokens file (E_BAD_TOKENS_FILE) stops here.
  const { auth, token, callers } = localAuth(options, settings);
  // Whose runs and approvals a restart carries on: the default tenant's, and every tenant the tokens file names.
  const tenants = [
    ...new Set([DEFAULT_TENANT, ...(auth.kind === 'tokens' ? auth.tokens.flatMap((t) => t.tenant ?? []) : [])]),
  ];

  const counters = stackCounters(options.instrument === true);
  // Before anything opens too: a bad quota (E_BAD_QUOTAS) stops here.
  const quotaOptions = options.awsQuotas ?? quotasFromEnv(process.env);
  const quotas: StackQuotas | undefined =
    quotaOptions === undefined || quotaOptions === false
      ? undefined
      : stackQuotas({ ...quotaOptions, tableName: LOCAL_TABLE_NAME });
  // The lock first: a second process on the directory stops here, before it opens anything the first one uses.
  const data: DataDir | undefined = options.dataDir === undefined ? undefined : openDataDir(options.dataDir);
  let journal: ExecutionJournal | undefined;
  let ledgerFile: LedgerFile | undefined;
  const dynamo = await startInProcessDynamo({
    tableName: LOCAL_TABLE_NAME,
    ...(data ? { path: join(data.dir, 'store') } : {}),
    ...(counters.onCommand ? { onCommand: counters.onCommand } : {}),
    ...(quotas ? { aroundCalls: quotas.dynamo } : {}),
  }).catch((error: unknown) => {
    data?.release();
    throw error;
  });
  // The table's change stream, as DynamoDB Streams would deliver it: every announcing write goes to the relay.
  let outbox: LocalOutboxStream | undefined;
  let mailbox: LocalMailbox | undefined;
  let timers: LocalTimers | undefined;
  const { retentionSeconds } = settings;
  const dynamoStore = createDynamoStore({
    client: dynamo.client,
    tableName: LOCAL_TABLE_NAME,
    stream: (record) => outbox?.accept(record),
    retentionSeconds,
  });
  const retention = createDynamoRetentionOf({ client: dynamo.client, tableName: LOCAL_TABLE_NAME, retentionSeconds });
  const hooks = faultHooks(faults, { client: dynamo.client, stream: (record) => outbox?.accept(record) });
  const store = counters.counted(options.wrapStore ? options.wrapStore(dynamoStore) : dynamoStore);
  const catalog = localCatalog(options.conformance === true, options.extraCapabilities?.capabilities, settings.catalog);
  const onBusError = (error: unknown, event: BusEnvelope) =>
    process.stderr.write(
      `${terminalLine(`cairn: a bus subscriber failed on ${event['detail-type']}: ${String(error)}`)}\n`,
    );
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
      counters.invoked(key);
      const handler = handlers[key];
      if (!handler) throw new Error(`no local handler for ${key}`);
      // As a Lambda entry does (functions/root.ts lazyHandler): a retryable cairn error leaves the function as
      // TransientError, the name the machines' Retry matches, so a throttled model or store is retried here too.
      return handler(payload).catch((error: unknown) => {
        throw asTransient(error);
      });
    };
  if (data) journal = openExecutionJournal(join(data.dir, 'executions.jsonl'));
  // The runs' commands not yet decided and the timers not yet fired, kept as SQS and the scheduler keep them.
  const letters = data ? openMailboxJournal(join(data.dir, 'mailbox.jsonl')) : undefined;
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
    ...(quotas
      ? { accountConcurrency: { gate: quotas.lambda, onThrottle: () => quotas.counter.count('lambda.concurrency') } }
      : {}),
    ...(options.retryIntervalMs === undefined ? {} : { retryIntervalMs: options.retryIntervalMs }),
    ...(counters.onStateEntered ? { onStateEntered: counters.onStateEntered } : {}),
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
    // Under the account's quotas the decider paces its step starts below the StartExecution bucket; without them
    // there is no bucket to stay inside.
    startPacing: quotas ? startPacingWithin(quotas.quotas) : false,
    // The run log on the same table; it writes the run's records through the handlers' store (its tests' wrapper too).
    runLog: (handlersStore) =>
      createDynamoRunLogOf(
        {
          client: dynamo.client,
          tableName: LOCAL_TABLE_NAME,
          stream: (record) => outbox?.accept(record),
          retentionSeconds,
        },
        handlersStore,
      ),
    retention: () => retention,
    // A run's commands are taken here, in order, a batch at a time: the decider Lambda's SQS FIFO queue, in process.
    mailbox: (shell) => {
      mailbox = createLocalMailbox({
        // Under the quotas, the starts the decider's pacer or the StartExecution bucket sent back are counted.
        handle: counters.batching(quotas ? countDeferredStarts(shell.handle, quotas.counter) : shell.handle),
        ...(letters === undefined ? {} : { journal: letters }),
        onError: (error, runId) =>
          process.stderr.write(`${terminalLine(`cairn: a batch of run ${runId} failed: ${String(error)}`)}\n`),
      });
      return counters.sending(mailbox);
    },
    timers: (box) => {
      timers = createLocalTimers(box, () => new Date(), letters);
      return timers;
    },
    // The relay reads the table's stream itself, below any wrapper the tests put around the handlers' store.
    relayStore: () => dynamoStore,
    // The service's quota first, then what the faults make of the answer the SDK gave up on.
    executions: () => hooks.executions(quotas ? quotas.executions(executions) : executions),
    events: () => bus,
    catalog: () => catalog,
    webhookSecrets: () => secretsFrom(settings.webhooks.secrets),
    // With a data directory the replay memory is the store's, as deployed, so a restart forgets no delivery.
    replayGuard: (handlersStore, clock) =>
      data ? createStoreReplayGuard(handlersStore, clock) : createMemoryReplayGuard({ clock }),
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
  // The outbox, the bus rules' targets and the planning jobs are invoked asynchronously deployed: under the
  // account's concurrency they wait for a place (Lambda keeps the event) instead of failing.
  const asynchronous = <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    quotas ? quotas.async(handler) : handler;
  const wrapOwn = options.wrapHandler ?? ((_key: string, handler: LocalHandler) => handler);
  // The stream (a test's wrapper, key `Outbox`, may make its relay fail), the journal of what it kept after its
  // tries, and the redrive's periodic sweep of that journal.
  const local = startLocalOutbox({
    relay: root.relay,
    wrap: (handler) => (quotas ? asynchronous(wrapOwn('Outbox', handler)) : wrapOwn('Outbox', handler)),
    dataDir: data?.dir,
    ...options.outboxRedrive,
  });
  outbox = local.stream;

  const wrapHandler = (key: string, handler: LocalHandler) => hooks.handler(key, wrapOwn(key, handler));
  const planJobs = createInProcessPlanJobDispatcher({
    plan: asynchronous(
      (payload: { planJobId: string }) =>
        handlers.Planner?.(payload) ?? Promise.reject(new Error('the planner is not ready')),
    ),
    replan: asynchronous((payload: { planJobId: string }) => replannerHandler(payload)),
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
  // The rules that drive cairn, matched in process with the deployed patterns (BUS_RULES). The replanner's deliveries
  // go through the tests' own wrapper (`wrapHandler`, key `Replanner`) as the machines' Lambdas do.
  const replannerDelivery = wrapOwn('Replanner', replannerHandler as LocalHandler) as typeof replannerHandler;
  subscribeBusRules(bus, {
    Replanner: asynchronous(replannerDelivery),
    Invalidator: asynchronous(createInvalidatorHandler({ invalidator: root.invalidator })),
  });

  // Large plan bodies are decoded and validated in worker threads: this event loop also answers /health.
  const planChecks = createPlanCheckPool({ catalog: root.catalog, limits: root.limits });
  const app = createApp({
    ...root.apiDeps({
      auth,
      ...(options.conformance ? { ledger: { entries: () => ledgerEntries() } } : {}),
    }),
    planChecks,
    // Server-sent events, unless the stack rehearses AWS's quotas: API Gateway's 29 s and Lambda's whole answers
    // rule a stream out there, and the feed long-polls as deployed.
    eventFeed: { stream: !quotas, pollMs: LOCAL_FEED_POLL_MS },
  });
  // API Gateway and the API Lambda between the client and the app, with Lambda's 6 MB each way (and, under quotas,
  // the API Lambda's time limit).
  const limited = withLambdaPayloadLimits(app.fetch);
  const api = quotas ? quotas.api(limited) : limited;
  const host = options.host ?? DEFAULT_LOCAL_HOST;
  const server = await serveApi(api, { port: options.port ?? 0, hostname: host, timeouts });
  const { port } = server.address() as AddressInfo;
  // What the mailbox and the timers held before a restart goes on first: a step's end waits there to be decided.
  const box = root.mailbox;
  if (letters !== undefined) {
    mailbox?.repost(letters.recovered.letters);
    timers?.rearm(letters.recovered.timers);
  }
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  // People told of approvals (--notify-url): a consumer of the bus, with its reminders armed again from the store.
  const notifier = await startLocalNotifier({
    settings: settings.notify,
    tenants,
    bus,
    store,
    clock: root.clock,
    consoleUrl: `${url}/console/`,
    ...(options.notifySending === undefined ? {} : { sending: options.notifySending }),
  });
  const resumed = data ? await resumeOpenWork(executions, store, tenants) : { executions: [], started: [] };
  // dynalite has no TTL: expired records are swept here instead (the deployed table's TTL and stream do it there).
  const sweep = startRetentionSweep({
    client: dynamo.client,
    tableName: LOCAL_TABLE_NAME,
    retention,
    clock: () => new Date(),
    onError: (error) => process.stderr.write(`${terminalLine(`cairn: a retention sweep failed: ${String(error)}`)}\n`),
  });

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
    ...(callers === undefined ? {} : { callers }),
    bus,
    store,
    catalog,
    executions,
    mailbox: box,
    synthesis,
    ...(data ? { dataDir: data.dir } : {}),
    resumed,
    ...(hooks.report ? { faults: hooks.report } : {}),
    ...(quotas ? { quotas: quotas.quotas } : {}),
    request,
    stats: () => ({ ...counters.stats(), throttles: quotas?.counter.counts() ?? {} }),
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
    sweepRetention: (at) =>
      at === undefined
        ? sweep.sweepNow()
        : sweepExpired({ client: dynamo.client, tableName: LOCAL_TABLE_NAME, retention }, at),
    redriveOutbox: () => local.sweep.sweep(),
    async settled() {
      // Each may start work in another (a step announces events, a bus rule starts executions): a few passes.
      for (let pass = 0; pass < 3; pass++) {
        await planJobs.idle();
        await executions.idle();
        await mailbox?.idle();
        await local.stream.drain();
        await bus.drain();
      }
    },
    async close() {
      sweep.close();
      notifier?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await planChecks.close();
      // A planning job under way finishes (it may send its run's StartRun) before the mailbox closes; then a batch
      // under way ends before the executions it may start are closed to it.
      await planJobs.idle();
      timers?.close();
      await mailbox?.close();
      executions.close();
      await local.close();
      await bus.drain();
      await notifier?.idle();
      // MCP servers' connections and child processes: a stdio server would otherwise outlive the stack.
      await root.close();
      await dynamo.stop();
      await root.expressions.close();
      journal?.close();
      letters?.close();
      if (ledgerFile) {
        ledger.keepIn(undefined);
        ledgerFile.close();
      }
      data?.release();
    },
  };
}
