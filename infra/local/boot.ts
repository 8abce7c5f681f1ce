/**
 * The embedded stack in one process: dynalite through the real DynamoDB client, the state machines synthesized
 * from the CDK app and run by aws-local-stepfunctions, the in-process bus, and the Hono app on a local port.
 * Handlers are the same `createHandler(deps)` factories the Lambdas use; only the adapters differ.
 */
import './polyfills.ts';
import './xray-manual-mode.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createHandler as createCoordinatorHandler } from '../../functions/coordinator.ts';
import { createHandler as createInvalidatorHandler } from '../../functions/invalidator.ts';
import { createHandler as createPlannerHandler } from '../../functions/planner.ts';
import { createHandler as createReplannerHandler } from '../../functions/replanner.ts';
import { createHandler as createExecutorHandler } from '../../functions/step-executor.ts';
import { createHandler as createValidatorHandler } from '../../functions/validator.ts';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { createLocalEventBus, type LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { createLocalOutboxStream, type LocalOutboxStream } from '../../shared/adapters/local/outbox-stream.ts';
import { localWebhooksFromEnv } from '../../shared/adapters/local/webhooks.ts';
import { createApp } from '../../shared/api/app.ts';
import { conformanceCatalog, ledgerEntries } from '../../shared/capabilities/conformance.ts';
import { createCapabilityRegistry } from '../../shared/capabilities/registry.ts';
import { builtinBindings } from '../../shared/capabilities/runtime-registry.ts';
import demoCatalog from '../../shared/catalog/demo.json' with { type: 'json' };
import { type Catalog, loadCatalog } from '../../shared/plan/catalog.ts';
import type { Capability, CatalogDocument } from '../../shared/plan/schema.ts';
import type { PlanLimits } from '../../shared/plan/validate.ts';
import { createHtnPlanModel } from '../../shared/planner/htn/model.ts';
import { createPlanner } from '../../shared/planner/planner.ts';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';
import type { MetricsSink } from '../../shared/ports/metrics.ts';
import type { Store } from '../../shared/ports/store.ts';
import { type CoordinatorDeps, createCoordinator } from '../../shared/services/coordinator.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { createOutboxRelay } from '../../shared/services/outbox/relay.ts';
import { createReplanner } from '../../shared/services/replanner.ts';
import { createStepRunner } from '../../shared/services/step/run-step.ts';
import { subscribeBusRules } from './bus-rules.ts';
import { startInProcessDynamo } from './dynalite-in-process.ts';
import { createLocalExecutions, type LocalExecutions, type LocalHandler } from './local-executions.ts';
import { synthesizeStateMachines } from './synth.ts';

export const LOCAL_TABLE_NAME = 'cairn-local';

export interface LocalStackOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** The API token; a random one when absent. */
  readonly token?: string | undefined;
  readonly conformance?: boolean;
  readonly limits?: Partial<PlanLimits & { maxReplans: number; runDeadlineSeconds: number }>;
  /** Compresses the step machine's retry backoff (tests); absent: the ASL's own seconds. */
  readonly backoffMs?: number;
  /** Delay of the demo capabilities (ms); tests set 0. */
  readonly demoDelayMs?: number | { min: number; max: number };
  /** Retry delay base in seconds (the Backoff Wait); default 1. */
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
  /** Receives the coordinator's and the step runner's operational metrics (tests); none when absent. */
  readonly metrics?: MetricsSink;
  /** More capabilities with their builtin bindings (tests: alternatives the packs do not have). */
  readonly extraCapabilities?: {
    readonly capabilities: readonly Capability[];
    readonly bindings: Readonly<Record<string, CapabilityBinding>>;
  };
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

/** The demo catalog, plus the conformance pack when asked for, plus any extra capabilities. */
export function localCatalog(conformance: boolean, extra: readonly Capability[] = []): Catalog {
  const demo = demoCatalog as unknown as CatalogDocument;
  const packs = conformance ? [...demo.capabilities, ...conformanceCatalog().capabilities] : demo.capabilities;
  return loadCatalog(extra.length === 0 && !conformance ? demo : { capabilities: [...packs, ...extra] });
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const limits = {
    maxSteps: options.limits?.maxSteps ?? 64,
    maxDepth: options.limits?.maxDepth ?? 16,
    maxReplans: options.limits?.maxReplans ?? 3,
    runDeadlineSeconds: options.limits?.runDeadlineSeconds ?? 86_400,
  };
  const planLimits: PlanLimits = { maxSteps: limits.maxSteps, maxDepth: limits.maxDepth };
  const token = options.token ?? randomBytes(18).toString('base64url');
  const clock = () => new Date();
  const newId = () => randomUUID();

  const counts = {
    stateTransitions: 0,
    dynamoWrites: 0,
    auditWrites: 0,
    dynamoReads: 0,
    dynamoReadItems: 0,
    lambda: {} as Record<string, number>,
  };
  const dynamo = await startInProcessDynamo({
    tableName: LOCAL_TABLE_NAME,
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
  });
  // The table's change stream, as DynamoDB Streams would deliver it: every announcing write goes to the relay.
  let outbox: LocalOutboxStream | undefined;
  const dynamoStore = createDynamoStore({
    client: dynamo.client,
    tableName: LOCAL_TABLE_NAME,
    stream: (record) => outbox?.accept(record),
  });
  const store = options.wrapStore ? options.wrapStore(dynamoStore) : dynamoStore;
  const catalog = localCatalog(options.conformance === true, options.extraCapabilities?.capabilities);
  const planner = createPlanner({ model: createHtnPlanModel(), catalog, limits: planLimits });
  const bus = createLocalEventBus({
    onError: (error, event) =>
      process.stderr.write(`cairn: a bus subscriber failed on ${event['detail-type']}: ${String(error)}\n`),
  });
  outbox = createLocalOutboxStream(createOutboxRelay({ events: bus, store: dynamoStore }));
  const stream = outbox;
  const machines = synthesizeStateMachines(limits);

  // Handlers and executions refer to each other (the coordinator starts executions that call handlers): the
  // executions get late-bound entries that reach the real handlers once they exist.
  const handlers: Record<string, LocalHandler> = {};
  const lateBound =
    (key: string): LocalHandler =>
    (payload) => {
      if (options.instrument) counts.lambda[key] = (counts.lambda[key] ?? 0) + 1;
      const handler = handlers[key];
      if (!handler) throw new Error(`no local handler for ${key}`);
      return handler(payload);
    };
  const executions = createLocalExecutions({
    definitions: { run: machines.run, step: machines.step },
    functionOf: machines.functionOf,
    handlers: Object.fromEntries(
      ['Planner', 'Validator', 'Coordinator', 'StepExecutor', 'Api'].map((key) => [key, lateBound(key)]),
    ),
    ...(options.backoffMs === undefined ? {} : { backoffMs: options.backoffMs }),
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
  const coordinatorDeps: CoordinatorDeps = {
    store,
    executions,
    catalog,
    clock,
    newId,
    config: {
      runDeadlineSeconds: limits.runDeadlineSeconds,
      retryBaseSeconds: options.retryBaseSeconds ?? 1,
      retryCapSeconds: 60,
      maxSteps: limits.maxSteps,
      maxDepth: limits.maxDepth,
      traceRetention: 'last',
      maxReplans: limits.maxReplans,
    },
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  };
  const coordinator = createCoordinator(coordinatorDeps);
  // The replanner plans with the same embedded model as the planner (the HTN method library).
  const replanner = createReplanner({ ...coordinatorDeps, model: createHtnPlanModel() });
  const demo = {
    ...(options.demoDelayMs === undefined ? {} : { delayMs: options.demoDelayMs }),
    ...(options.demoOutage === undefined ? {} : { outage: options.demoOutage }),
  };
  const packs = builtinBindings({
    catalog,
    builtins: options.conformance ? ['demo', 'conformance'] : ['demo'],
    demo,
  });
  // Extra bindings win over the demo pack's generated placeholders for the same targets.
  const registry = createCapabilityRegistry(packs, options.extraCapabilities?.bindings ?? {});
  const runner = createStepRunner({ ...coordinatorDeps, registry });
  const wrapHandler = options.wrapHandler ?? ((_key: string, handler: LocalHandler) => handler);
  Object.assign(handlers, {
    Planner: wrapHandler('Planner', createPlannerHandler({ store, planner, clock }) as LocalHandler),
    Validator: wrapHandler('Validator', createValidatorHandler({ store, catalog, limits: planLimits }) as LocalHandler),
    Coordinator: wrapHandler('Coordinator', createCoordinatorHandler({ coordinator }) as LocalHandler),
    StepExecutor: wrapHandler('StepExecutor', createExecutorHandler({ runner }) as LocalHandler),
  });
  // The rules that drive cairn, matched in process with the deployed patterns (BUS_RULES).
  const invalidator = createInvalidator(coordinatorDeps);
  subscribeBusRules(bus, {
    Replanner: createReplannerHandler({ replanner }),
    Invalidator: createInvalidatorHandler({ invalidator }),
  });

  const app = createApp({
    store,
    executions,
    catalog,
    planner,
    limits: planLimits,
    cancelRun: (runId) => coordinator.cancelRun(runId).then(() => undefined),
    replanRun: (request) => replanner.replanRun(request),
    invalidateStep: (request) => invalidator.invalidateStep(request),
    auth: { kind: 'token', token },
    clock,
    newId,
    ...(options.conformance ? { ledger: { entries: () => ledgerEntries() } } : {}),
    events: bus,
    webhooks: localWebhooksFromEnv(process.env, clock),
  });
  const host = options.host ?? '127.0.0.1';
  const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const request = async (method: string, path: string, body?: unknown) => {
    const response = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
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
        await executions.idle();
        await stream.drain();
        await bus.drain();
      }
    },
    async close() {
      executions.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stream.drain();
      await bus.drain();
      await dynamo.stop();
    },
  };
}
