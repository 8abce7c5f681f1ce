/**
 * The composition root: one store (and one catalog, one clock) wired into every service it builds, each member
 * built once and only when asked for, and the settings' numbers in the services' configuration.
 */
import { describe, expect, it } from 'vitest';
import { capabilityCallConfig, coordinatorConfig, createRoot } from '../../../shared/composition/root.ts';
import { defaultSettings, type Settings, settingsFromEnv } from '../../../shared/config/settings.ts';
import { encodeOutbox } from '../../../shared/events/outbox.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { CapabilityBinding, CapabilityRegistry } from '../../../shared/ports/capabilities.ts';
import type { EventPublisher } from '../../../shared/ports/events.ts';
import type { Executions } from '../../../shared/ports/executions.ts';
import type { Place } from '../../../shared/ports/place.ts';
import type { PlanModel } from '../../../shared/ports/plan-model.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';
import { json, startHttpServer } from '../../support/http-server.ts';

/** A store whose every call fails naming the store and the method: a service that reaches it says which it used. */
const taggedStore = (tag: string): Store =>
  new Proxy({} as Store, {
    get: (_target, method) => async () => {
      throw new Error(`${tag}.${String(method)}`);
    },
  });

const catalog = loadCatalog({
  capabilities: [
    { target: 'tool:echo', description: 'echo', inputSchema: {}, outputSchema: {}, sideEffect: 'none' },
    { target: 'tool:other', description: 'other', inputSchema: {}, outputSchema: {}, sideEffect: 'none' },
  ],
});

/** A place that counts what the root asks it to build. */
function countingPlace(overrides: Partial<Place> = {}) {
  const built: Record<string, number> = {};
  const count =
    <T>(name: string, make: () => T) =>
    (): T => {
      built[name] = (built[name] ?? 0) + 1;
      return make();
    };
  const store = taggedStore('the-store');
  const place: Place = {
    store: count('store', () => store),
    executions: count('executions', () => ({}) as Executions),
    events: count('events', () => ({ publish: async () => undefined }) satisfies EventPublisher),
    catalog: count('catalog', () => catalog),
    webhookSecrets: count('webhookSecrets', () => async () => undefined),
    replayGuard: (guarded) => ({ firstSeen: async () => guarded === store }),
    // The run log keeps nothing: a run is loaded from the store alone.
    runLog: count('runLog', () => ({ last: async () => undefined, commit: async () => true, project: async () => {} })),
    // The runs' commands are decided in place, one at a time.
    mailbox: (shell) => ({
      send: async (runId, command) => void (await shell.handle(runId, [command])),
      ask: async (runId, command) => (await shell.handle(runId, [command]))[0] ?? { ok: true },
      answer: async () => undefined,
    }),
    timers: () => ({ schedule: async () => {} }),
    retention: count('retention', () => ({ purgeRun: async () => 0 })),
    ...overrides,
  };
  return { place, built, store };
}

/** A stream record of a write that announced RunStarted, as DynamoDB Streams deliver it. */
const announcing = () => {
  const entry = {
    id: 'e1',
    runId: 'r1',
    at: '2030-01-01T00:00:00.000Z',
    events: [{ type: 'RunStarted' as const, detail: { runId: 'r1' } }],
  };
  return { eventName: 'MODIFY', dynamodb: { NewImage: { outbox: { S: encodeOutbox(entry) } } } };
};

const rejection = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error as Error).message,
  );

describe('createRoot', () => {
  it('builds nothing until a member is asked for, then only what that member needs', () => {
    const { place, built } = countingPlace({
      executions: () => {
        throw new Error('CAIRN_RUN_MACHINE_ARN is not set');
      },
    });
    const root = createRoot(defaultSettings(), place);
    expect(built).toEqual({});

    // What the validator asks for: no executions, so no machine ARN is needed.
    expect(root.store).toBeDefined();
    expect(root.catalog).toBe(catalog);
    expect(root.limits).toEqual(defaultSettings().limits);
    expect(built).toEqual({ store: 1, catalog: 1 });
    // The coordinator does need them: the missing setting fails its build, naming the variable.
    expect(() => root.coordinator).toThrow('CAIRN_RUN_MACHINE_ARN is not set');
  });

  it('wires one store, one catalog and one clock into every service, each built once', async () => {
    const { place, built, store } = countingPlace();
    const root = createRoot(defaultSettings(), place);

    const deps = [root.coordinatorDeps, root.runnerDeps, root.apiDeps({ auth: { kind: 'gateway' } })];
    for (const d of deps) {
      expect(d.store).toBe(store);
      expect(d.catalog).toBe(catalog);
      expect(d.clock).toBe(root.clock);
      expect(d.newId).toBe(root.newId);
    }
    expect(root.runnerDeps.executions).toBe(root.coordinatorDeps.executions);
    expect(root.coordinator).toBe(root.coordinator);
    expect(root.planModel).toBe(root.planModel);

    // Each service reaches that one store.
    expect(await rejection(root.mailbox.ask('r1', { kind: 'CancelRun', compensate: false, by: null }))).toMatch(
      /^the-store\./,
    );
    expect(await rejection(root.replanner.replanRun({ runId: 'r1', reason: 'why' }))).toMatch(/^the-store\./);
    expect(await rejection(root.invalidator.invalidateResource({ resourceKey: 'doc:1', eventId: 'e1' }))).toMatch(
      /^the-store\./,
    );
    expect(
      await rejection(
        root.runner.runStep({ runId: 'r1', stepId: 's1', generation: 0, executionId: 'x', previous: null }),
      ),
    ).toMatch(/^the-store\./);
    const api = root.apiDeps({ auth: { kind: 'gateway' } });
    expect(api.mailbox).toBe(root.mailbox);
    // The API's webhook replay memory is kept in the same store.
    expect(await root.webhooks.replayGuard.firstSeen('k', 0)).toBe(true);
    expect(api.webhooks).toBe(root.webhooks);
    expect(api.planner).toBe(root.planner);
    expect(api.events).toBe(root.events);

    // The outbox relay records the audit log in it too.
    expect(await rejection(root.relay.relay([announcing()]))).toBe('the-store.recordEvents');
    // Everything was built from one adapter of each kind.
    expect(built).toEqual({ store: 1, runLog: 1, executions: 1, events: 1, catalog: 1, webhookSecrets: 1 });
  });

  it('gives the outbox relay the place’s relay store when it has one', async () => {
    const relayStore = taggedStore('the-table');
    const { place, built } = countingPlace({ relayStore: () => relayStore });
    const root = createRoot(defaultSettings(), place);
    // Published, then recorded in the audit log through the relay store: the table itself, not the handlers' store.
    expect(await rejection(root.relay.relay([announcing()]))).toBe('the-table.recordEvents');
    expect(built.store).toBeUndefined();
  });

  it('puts the settings’ numbers into the services’ configuration', () => {
    const settings = settingsFromEnv({
      CAIRN_RUN_DEADLINE_SECONDS: '600',
      CAIRN_RETRY_BASE_SECONDS: '2',
      CAIRN_MAX_STEPS: '10',
      CAIRN_TRACE_RETENTION: 'full',
      CAIRN_MAX_REPLANS: '0',
      CAIRN_MAX_OUTPUT_BYTES: '1000',
    });
    const root = createRoot(settings, countingPlace().place);

    expect(root.coordinatorDeps.config).toEqual({
      runDeadlineSeconds: 600,
      retryBaseSeconds: 2,
      retryCapSeconds: 60,
      maxSteps: 10,
      maxDepth: 16,
      traceRetention: 'full',
      maxReplans: 0,
    });
    expect(root.coordinatorDeps.config).toEqual(coordinatorConfig(settings));
    expect(root.runnerDeps.capabilityCall).toEqual(capabilityCallConfig(settings));
    expect(root.runnerDeps.capabilityCall).toEqual({ maxOutputBytes: 1000, idempotencyTtlSeconds: 86_400, prices: {} });
    expect(root.planner.limits).toEqual({ maxSteps: 10, maxDepth: 16 });
    expect(root.apiDeps({ auth: { kind: 'gateway' } }).limits).toEqual({ maxSteps: 10, maxDepth: 16 });
    expect(root.webhooks.replayWindowSeconds).toBe(300);
    expect(root.apiDeps({ auth: { kind: 'gateway' } }).console).toBe(settings.console);
  });

  it('plans with the place’s model, else the HTN method library, one model for planner and replanner', () => {
    expect(createRoot(defaultSettings(), countingPlace().place).planModel.name).toBe('htn');
    const model = { name: 'bedrock' } as PlanModel;
    const root = createRoot(defaultSettings(), countingPlace({ planModel: () => model }).place);
    expect(root.planModel).toBe(model);
  });

  it('plans with the OpenAI-compatible model the settings name, whatever the place offers', () => {
    const settings = settingsFromEnv({ CAIRN_MODEL_URL: 'http://localhost:11434/v1', CAIRN_MODEL: 'llama3.1' });
    const root = createRoot(settings, countingPlace({ planModel: () => ({ name: 'bedrock' }) as PlanModel }).place);
    expect(root.planModel.name).toBe('openai:llama3.1');
    expect(root.planner).toBe(root.planner);
  });

  it('builds the registry from packs, configured bindings and the place’s extra ones, later winning', () => {
    const extra: CapabilityBinding = { kind: 'builtin', invoke: async () => ({ output: 'extra' }) };
    const wrapped: CapabilityRegistry[] = [];
    const settings: Settings = {
      ...defaultSettings(),
      capabilities: {
        ...defaultSettings().capabilities,
        bindings: { 'tool:other': { kind: 'http', url: 'https://other.example.com' } },
      },
    };
    const { place } = countingPlace({
      capabilities: {
        extra: { 'tool:echo': extra },
        wrap: (registry) => {
          wrapped.push(registry);
          return registry;
        },
      },
    });
    const root = createRoot(settings, place);

    expect(root.registry.binding('tool:echo')).toBe(extra);
    expect(root.registry.binding('tool:other')?.kind).toBe('http');
    expect(wrapped).toEqual([root.registry]);
    expect(root.runnerDeps.registry).toBe(root.registry);
  });

  it('gives the configured HTTP bindings the settings’ output limit', async () => {
    const server = await startHttpServer();
    server.respondWith(json(200, { value: 'x'.repeat(2000) }));
    const settings = settingsFromEnv({
      CAIRN_MAX_OUTPUT_BYTES: '1000',
      CAIRN_BINDINGS: JSON.stringify({ 'tool:other': { kind: 'http', url: server.url, internal: true } }),
    });
    try {
      const root = createRoot(settings, countingPlace().place);

      const error = await caught(root.registry.binding('tool:other')?.invoke(aCall()) ?? Promise.resolve());

      expect(codeOf(error)).toBe('E_OUTPUT_TOO_LARGE');
      await root.close();
    } finally {
      await server.close();
    }
  });

  it('passes the place’s metrics to the services that report them', () => {
    const sink = { count: () => undefined, duration: () => undefined };
    const root = createRoot(defaultSettings(), countingPlace({ metrics: () => sink }).place);
    expect(root.coordinatorDeps.metrics).toBe(sink);
    expect(root.runnerDeps.metrics).toBe(sink);
    expect(createRoot(defaultSettings(), countingPlace().place).coordinatorDeps).not.toHaveProperty('metrics');
  });
});
