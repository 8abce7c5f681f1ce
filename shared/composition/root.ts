/**
 * The one composition root: the dependency graph of cairn (store, executions, catalog, clock, ids, the coordinator
 * and step runner, planner, replanner, invalidator, capability registry, outbox relay, the API's dependencies),
 * built from the settings (shared/config/settings.ts) and the adapters of a place (shared/ports/place.ts). Every
 * Lambda entry (functions/root.ts, with the AWS adapters) and the embedded runtime (infra/local/boot.ts, with the
 * local ones) use it; only the place differs.
 *
 * Every member is built once, on first use, from the members it needs: one store, one catalog and one clock for
 * every service of a root, and a handler that never asks for the machines' ARNs never needs them.
 */
import { randomUUID } from 'node:crypto';
import { createRuntimeRegistry } from '../adapters/bindings.ts';
import { withPlainPaths } from '../adapters/expressions/plain-path-evaluator.ts';
import { createWorkerEvaluator } from '../adapters/expressions/worker-evaluator.ts';
import { createInProcessPlanJobDispatcher } from '../adapters/local/plan-job-dispatcher.ts';
import { lazyOpenAIPlanModel } from '../adapters/openai/lazy-plan-model.ts';
import type { AuthConfig } from '../api/auth.ts';
import type { ApiDeps } from '../api/deps.ts';
import type { CapabilityRegistryView } from '../capabilities/registry.ts';
import { DEFAULT_REPLAN_WATCH_SECONDS } from '../config/defaults.ts';
import type { Settings } from '../config/settings.ts';
import type { RunSettings, TargetFacts } from '../engine/run/state.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { PlanLimits } from '../plan/validate.ts';
import { createHtnPlanModel } from '../planner/htn/model.ts';
import { createPlanner, type Planner } from '../planner/planner.ts';
import type { CapabilityRegistry } from '../ports/capabilities.ts';
import type { EventPublisher } from '../ports/events.ts';
import type { Executions } from '../ports/executions.ts';
import type { ExpressionEvaluator } from '../ports/expressions.ts';
import type { Mailbox, Replies } from '../ports/mailbox.ts';
import type { Place } from '../ports/place.ts';
import type { PlanJobDispatcher } from '../ports/plan-jobs.ts';
import type { PlanModel } from '../ports/plan-model.ts';
import type { Retention } from '../ports/retention.ts';
import type { Store } from '../ports/store.ts';
import type { WebhookConfig } from '../ports/webhooks.ts';
import { type Admission, createAdmission } from '../services/admission.ts';
import { type Coordinator, type CoordinatorDeps, createCoordinator } from '../services/coordinator.ts';
import type { CoordinatorConfig } from '../services/coordinator-types.ts';
import { createInvalidator, type Invalidator } from '../services/invalidator.ts';
import { createOutboxRedrive, type OutboxRedrive } from '../services/outbox/redrive.ts';
import { createOutboxRelay, type OutboxRelay } from '../services/outbox/relay.ts';
import { createStreamBatchConsumer, type StreamBatchConsumer } from '../services/outbox/stream-batch.ts';
import { createPlanJobs, type PlanJobs, runPlanJob } from '../services/plan-jobs.ts';
import { createReplanner, type Replanner } from '../services/replanner.ts';
import { createRunShell, type RunShell } from '../services/runs/shell.ts';
import { createStartPacer, DEFAULT_START_PACING } from '../services/runs/start-pacer.ts';
import type { CapabilityCallConfig } from '../services/step/capability-call.ts';
import { createStepRunner, type StepRunner, type StepRunnerDeps } from '../services/step/run-step.ts';

export interface Root {
  readonly settings: Settings;
  readonly store: Store;
  readonly executions: Executions;
  readonly events: EventPublisher;
  readonly catalog: Catalog;
  readonly limits: PlanLimits;
  readonly clock: () => Date;
  readonly newId: () => string;
  /** Where plan expressions run: warm worker threads, bounded in time and memory (started on first use). */
  readonly expressions: ExpressionEvaluator;
  /** What the coordinator, the step runner, the replanner and the invalidator share. */
  readonly coordinatorDeps: CoordinatorDeps;
  readonly coordinator: Coordinator;
  /** The runs' deciders' shell (where the mailbox hands batches: embedded here, deployed in the decider Lambda). */
  readonly shell: RunShell;
  readonly mailbox: Mailbox;
  /** Answers for senders waiting on a decider elsewhere (deployed: the decider Lambda writes them). */
  readonly replies: Replies;
  readonly registry: CapabilityRegistry;
  readonly runnerDeps: StepRunnerDeps;
  readonly runner: StepRunner;
  readonly planModel: PlanModel;
  readonly planner: Planner;
  readonly replanner: Replanner;
  readonly invalidator: Invalidator;
  readonly relay: OutboxRelay;
  /** What the outbox Lambda does with a batch of the table's stream: the expiry purge, then the relay. */
  readonly streamBatch: StreamBatchConsumer;
  /** The deployed outbox redrive (the place's on-failure queue and stream); a place without them has none. */
  readonly redrive: OutboxRedrive;
  /** Deleting what ended runs left once their retention passed. */
  readonly retention: Retention;
  readonly webhooks: WebhookConfig;
  /** Releases what the root holds open (MCP connections and child processes) when the runtime stops. */
  close(): Promise<void>;
  /** The API's dependencies; the place says how callers authenticate (and may add the conformance ledger). */
  apiDeps(extra: { readonly auth: AuthConfig; readonly ledger?: ApiDeps['ledger'] }): ApiDeps;
}

/** The coordinator's configuration from the settings: the run's numbers and the plan limits. */
export const coordinatorConfig = (settings: Settings): CoordinatorConfig => ({
  ...settings.run,
  maxSteps: settings.limits.maxSteps,
  maxDepth: settings.limits.maxDepth,
});

/** The capability caller's configuration from the settings. */
export const capabilityCallConfig = (settings: Settings): CapabilityCallConfig => ({
  maxOutputBytes: settings.capabilities.maxOutputBytes,
  idempotencyTtlSeconds: settings.capabilities.idempotencyTtlSeconds,
  prices: settings.capabilities.prices,
});

/** The run settings a decider keeps from the deployment's. */
export const runSettingsOf = (settings: Settings): RunSettings => ({
  maxReplans: settings.run.maxReplans,
  runDeadlineSeconds: settings.run.runDeadlineSeconds,
  approvalTimeoutSeconds: settings.run.approvalTimeoutSeconds,
  replanWatchSeconds: settings.run.replanWatchSeconds ?? DEFAULT_REPLAN_WATCH_SECONDS,
  retry: { baseSeconds: settings.run.retryBaseSeconds, capSeconds: settings.run.retryCapSeconds },
  traceRetention: settings.run.traceRetention,
});

/** What the decider knows of each target from the catalog: whether it mutates, and what undoes it. */
export const targetFacts =
  (catalog: Catalog) =>
  (target: string): TargetFacts | undefined => {
    const capability = catalog.get(target);
    return capability === undefined
      ? undefined
      : { sideEffect: capability.sideEffect, compensateTarget: capability.compensate?.target };
  };

const fail = (): never => {
  throw new Error('the mailbox is used before the root built it');
};

function once<T>(make: () => T): () => T {
  let made: { readonly value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

export function createRoot(settings: Settings, place: Place): Root {
  const clock = place.clock ?? (() => new Date());
  const newId = place.newId ?? (() => randomUUID());
  const store = once(place.store);
  const executions = once(place.executions);
  const events = once(place.events);
  const catalog = once(place.catalog);
  const metrics = once(() => place.metrics?.());
  const limits: PlanLimits = { ...settings.limits };
  const expressions = once(
    (): ExpressionEvaluator =>
      place.expressions?.() ??
      withPlainPaths(
        createWorkerEvaluator({
          limits: settings.expressions.limits,
          workers: settings.expressions.workers,
          workerFile: settings.expressions.workerFile,
        }),
      ),
  );

  const runLog = once(() => place.runLog(store()));
  // The shell and the mailbox know each other: the mailbox hands the shell its batches, the shell's timers post to
  // the mailbox. Built together on first use.
  let built: { shell: RunShell; mailbox: Mailbox; admission: Admission } | undefined;
  const deciding = (): { shell: RunShell; mailbox: Mailbox; admission: Admission } => {
    if (built !== undefined) return built;
    const sink = metrics();
    let box: Mailbox | undefined;
    const late: Mailbox = {
      send: (runId, command) => (box ?? fail()).send(runId, command),
      ask: (runId, command, options) => (box ?? fail()).ask(runId, command, options),
      answer: (id) => (box ?? fail()).answer(id),
    };
    // Admission tells the runs it admits through their mailbox: the API queues runs, a run's end releases its slot.
    const admission = createAdmission({
      store: store(),
      mailbox: late,
      maxRunningRuns: settings.maxRunningRunsPerTenant,
    });
    const shell = createRunShell({
      admission,
      store: store(),
      runLog: runLog(),
      executions: executions(),
      timers: place.timers(late),
      mailbox: late,
      ...(place.startPacing === false
        ? {}
        : { pacer: createStartPacer({ ...DEFAULT_START_PACING, ...place.startPacing }) }),
      clock,
      settings: runSettingsOf(settings),
      targets: targetFacts(catalog()),
      ...(sink === undefined ? {} : { metrics: sink }),
    });
    box = place.mailbox(shell);
    built = { shell, mailbox: box, admission };
    return built;
  };
  const coordinatorDeps = once((): CoordinatorDeps => {
    const sink = metrics();
    return {
      mailbox: deciding().mailbox,
      store: store(),
      executions: executions(),
      catalog: catalog(),
      clock,
      newId,
      config: coordinatorConfig(settings),
      expressions: expressions(),
      ...(sink === undefined ? {} : { metrics: sink }),
    };
  });
  const coordinator = once(() => createCoordinator(coordinatorDeps()));
  // Kept apart from the wrapped registry so close() can reach the bindings; only a built registry is closed.
  let bindings: CapabilityRegistryView | undefined;
  const registry = once((): CapabilityRegistry => {
    const { demo, extra, wrap } = place.capabilities ?? {};
    // Builtin packs first, then the configured bindings (CAIRN_BINDINGS), then the place's extra ones: later win.
    const registry = createRuntimeRegistry({
      catalog: catalog(),
      builtins: settings.capabilities.builtins,
      bindings: settings.capabilities.bindings,
      deps: { maxOutputBytes: settings.capabilities.maxOutputBytes },
      ...(demo === undefined ? {} : { demo }),
      ...(extra === undefined ? {} : { extra }),
    });
    bindings = registry;
    return wrap === undefined ? registry : wrap(registry);
  });
  const runnerDeps = once(
    (): StepRunnerDeps => ({
      ...coordinatorDeps(),
      registry: registry(),
      capabilityCall: capabilityCallConfig(settings),
    }),
  );
  const runner = once(() => {
    // The step runner evaluates plan expressions: its workers start now, beside the first step's reads, not after.
    expressions()
      .warm()
      .catch(() => {});
    return createStepRunner(runnerDeps());
  });
  // One model for the planner and the replanner: an OpenAI-compatible endpoint when the settings name one (any
  // place), else Bedrock when the place offers it, else the HTN method library.
  const planModel = once((): PlanModel => {
    if (settings.plannerEndpoint !== undefined) return lazyOpenAIPlanModel(settings.plannerEndpoint);
    return place.planModel === undefined ? createHtnPlanModel() : place.planModel();
  });
  const planner = once(() => createPlanner({ model: planModel(), catalog: catalog(), limits }));
  const replanner = once(() => createReplanner({ ...coordinatorDeps(), model: planModel() }));
  const invalidator = once(() => createInvalidator(coordinatorDeps()));
  // Made on the first job, so that an API that never plans needs no worker function names.
  const planJobDispatcher = once(
    (): PlanJobDispatcher =>
      place.planJobDispatcher?.() ??
      createInProcessPlanJobDispatcher({
        plan: ({ planJobId }) => runPlanJob({ store: store(), clock, planner: planner() }, planJobId),
        replan: ({ planJobId }) =>
          runPlanJob({ store: store(), clock, replanRun: (r) => replanner().replanRun(r) }, planJobId),
      }),
  );
  const planJobs = once(
    (): PlanJobs =>
      createPlanJobs({
        store: store(),
        clock,
        newId,
        dispatcher: { dispatch: (job) => planJobDispatcher().dispatch(job) },
      }),
  );
  const relay = once(() =>
    createOutboxRelay({ events: events(), store: place.relayStore === undefined ? store() : place.relayStore() }),
  );
  const retention = once(() => place.retention());
  const streamBatch = once(() => createStreamBatchConsumer({ relay: relay(), retention: retention() }));
  const redrive = once((): OutboxRedrive => {
    if (place.outboxDeadLetters === undefined) throw new Error('this place has no outbox dead letters to redrive');
    const sink = metrics();
    return createOutboxRedrive({
      ...place.outboxDeadLetters(),
      consume: streamBatch(),
      clock,
      ...(sink === undefined ? {} : { metrics: sink }),
    });
  });
  const webhooks = once(
    (): WebhookConfig => ({
      secrets: place.webhookSecrets(),
      replayWindowSeconds: settings.webhooks.replayWindowSeconds,
      replayGuard: place.replayGuard(store(), clock),
      tenants: settings.webhooks.tenants,
    }),
  );

  return {
    settings,
    get store() {
      return store();
    },
    get executions() {
      return executions();
    },
    get events() {
      return events();
    },
    get catalog() {
      return catalog();
    },
    limits,
    clock,
    newId,
    get expressions() {
      return expressions();
    },
    get coordinatorDeps() {
      return coordinatorDeps();
    },
    get coordinator() {
      return coordinator();
    },
    get shell() {
      return deciding().shell;
    },
    get mailbox() {
      return deciding().mailbox;
    },
    get replies() {
      if (place.replies === undefined) throw new Error('this place keeps no replies: its mailbox answers directly');
      return place.replies();
    },
    get registry() {
      return registry();
    },
    get runnerDeps() {
      return runnerDeps();
    },
    get runner() {
      return runner();
    },
    get planModel() {
      return planModel();
    },
    get planner() {
      return planner();
    },
    get replanner() {
      return replanner();
    },
    get invalidator() {
      return invalidator();
    },
    get relay() {
      return relay();
    },
    get streamBatch() {
      return streamBatch();
    },
    get redrive(): OutboxRedrive {
      // Built on its first pass: only the outbox function redrives, and only it is given the dead letters' queue.
      return { redrive: () => redrive().redrive() };
    },
    get retention() {
      return retention();
    },
    get webhooks() {
      return webhooks();
    },
    close: async () => {
      await bindings?.close();
    },
    apiDeps: ({ auth, ledger }) => ({
      store: store(),
      executions: executions(),
      catalog: catalog(),
      planner: planner(),
      limits,
      mailbox: deciding().mailbox,
      admission: deciding().admission,
      runSettings: runSettingsOf(settings),
      decisionWaitMs: settings.decisionWaitMs,
      planJobs: planJobs(),
      auth,
      clock,
      newId,
      events: events(),
      webhooks: webhooks(),
      console: settings.console,
      ...(ledger === undefined ? {} : { ledger }),
    }),
  };
}
