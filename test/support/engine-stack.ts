/**
 * The embedded stack for engine tests (one per test file): the real synthesized run and step machines, the real
 * handlers and dynalite, with the scripted capability pack, a store and a handler wrapper a test can arm faults on,
 * every event published on the bus recorded, and (when asked) the metrics the engine emits. Runs are submitted
 * through the API with a unique objective and read back from the store once every execution is quiet.
 */

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/boot.ts';
import type { LocalExecutionInfo } from '../../infra/local/local-executions.ts';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { withPlannedSteps } from '../../shared/engine/run/planned.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { EVENT_SOURCE } from '../../shared/ports/events.ts';
import { nameSafe, runExecutionName } from '../../shared/ports/executions.ts';
import type { MetricDimensions, MetricsSink } from '../../shared/ports/metrics.ts';
import type { RunRecord, StepRecord } from '../../shared/ports/store.ts';
import { createScriptedPack, type ScriptedPack, stepsOf } from './scripted-pack.ts';
import { createHandlerFaults, createStoreFaults, type HandlerFaults, type StoreFaults } from './stack-faults.ts';

export interface RecordedMetric {
  readonly kind: 'count' | 'duration';
  readonly name: string;
  readonly value: number;
  readonly dimensions: MetricDimensions;
}

export interface EngineStack {
  readonly stack: LocalStack;
  readonly pack: ScriptedPack;
  readonly faults: StoreFaults;
  readonly handlers: HandlerFaults;
  readonly metrics: RecordedMetric[];
  /** A plan step of the scripted pack (see stepsOf). */
  readonly step: ReturnType<typeof stepsOf>;
  /** Submits a plan through the API under a fresh objective; returns the run id. */
  submit(steps: PlanStep[], name?: string): Promise<string>;
  /** Resolves when every execution has ended or waits for a person, and every bus delivery has settled. */
  quiet(): Promise<void>;
  /** Submits, waits until quiet and reads the outcome. */
  runPlan(steps: PlanStep[], name?: string): Promise<Outcome>;
  /** The run, its steps and its run execution, as they are now (read past the store wrapper). */
  outcome(runId: string): Promise<Outcome>;
  /** Every event published on the bus for a run, in the order the bus delivered them. */
  timeline(runId: string): BusEnvelope[];
  /** Events of a type published on the bus for a run (and a step). */
  published(type: string, runId: string, stepId?: string): BusEnvelope[];
  /** Step executions of a run's step (every generation and replay), in start order. */
  stepExecutions(runId: string, stepId: string): LocalExecutionInfo[];
  /** Run executions of a run (the first and those of its reopenings). */
  runExecutions(runId: string): LocalExecutionInfo[];
}

export interface Outcome {
  readonly runId: string;
  readonly run: RunRecord;
  readonly steps: ReadonlyMap<string, StepRecord>;
  /** The run's first run execution. */
  readonly execution: LocalExecutionInfo | undefined;
}

export type EngineStackOptions = Pick<LocalStackOptions, 'limits' | 'retryBaseSeconds'>;

async function startEngineStack(options: EngineStackOptions): Promise<EngineStack> {
  const pack = createScriptedPack();
  const faults = createStoreFaults();
  const handlers = createHandlerFaults();
  const metrics: RecordedMetric[] = [];
  const sink: MetricsSink = {
    count: (name, value, dimensions = {}) => metrics.push({ kind: 'count', name, value, dimensions }),
    duration: (name, value, dimensions = {}) => metrics.push({ kind: 'duration', name, value, dimensions }),
  };
  const stack = await startLocalStack({
    backoffMs: 1,
    demoDelayMs: 0,
    token: 'test-token',
    extraCapabilities: pack,
    wrapStore: faults.wrap,
    wrapHandler: handlers.wrap,
    metrics: sink,
    ...options,
    // Replanning answers final failures when it is on: these tests see the engine's own decisions.
    limits: { maxReplans: 0, ...options.limits },
  });
  const events: BusEnvelope[] = [];
  stack.bus.subscribe({ source: [EVENT_SOURCE] }, (event) => {
    events.push(event);
  });

  // Executions, the runs' mailboxes and the bus, until each is still (one may start work in another).
  const quiet = () => stack.settled();

  const outcome = async (runId: string): Promise<Outcome> => {
    const store = faults.raw();
    const run = await store.getRun(runId);
    if (!run) throw new Error(`no run ${runId}`);
    // As every reader reads a run's steps: the stored ones and those its start still implies.
    const plan = run.revision < 1 ? undefined : await store.getPlanRevision(runId, run.revision);
    const listed = withPlannedSteps(run, plan?.plan, await store.listSteps(runId));
    const steps = new Map(listed.map((s) => [s.stepId, s]));
    const execution = stack.executions.list().find((e) => e.machine === 'run' && e.name === runExecutionName(runId));
    return { runId, run, steps, execution };
  };

  const submit = (steps: PlanStep[], name = 'engine test') =>
    stack.startRun({ plan: { schemaVersion: 1, revision: 1, objective: `${name} ${randomUUID()}`, steps } });

  return {
    stack,
    pack,
    faults,
    handlers,
    metrics,
    step: stepsOf(pack),
    submit,
    quiet,
    async runPlan(steps, name) {
      const runId = await submit(steps, name);
      await quiet();
      return outcome(runId);
    },
    outcome,
    timeline: (runId) => events.filter((e) => e.detail.runId === runId),
    published: (type, runId, stepId) =>
      events.filter(
        (e) =>
          e['detail-type'] === type && e.detail.runId === runId && (stepId === undefined || e.detail.stepId === stepId),
      ),
    stepExecutions: (runId, stepId) =>
      stack.executions
        .list()
        .filter((e) => e.machine === 'step' && e.name.startsWith(`${nameSafe(runId)}-${nameSafe(stepId)}-g`)),
    runExecutions: (runId) =>
      stack.executions.list().filter((e) => e.machine === 'run' && e.name.startsWith(runExecutionName(runId))),
  };
}

/** One engine stack for the calling test file: started in its beforeAll, closed in its afterAll. */
export function useEngineStack(options: EngineStackOptions = {}): () => EngineStack {
  let engine: EngineStack | undefined;
  beforeAll(async () => {
    engine = await startEngineStack(options);
  }, 120_000);
  afterAll(async () => {
    await engine?.stack.close();
  });
  return () => {
    if (!engine) throw new Error('useEngineStack: the stack is used inside tests');
    return engine;
  };
}

/** Polls `check` (a read of the store or the API) until it holds; fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
