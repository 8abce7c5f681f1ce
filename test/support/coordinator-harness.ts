/**
 * A harness for the coordinator on the real DynamoDB store (dynalite): a recording Executions fake (starts,
 * stops, task tokens a test can answer), a recording event publisher, a scripted executor that writes attempt
 * records the way the step executor does, and drivers that walk the run and step machines' paths by calling the
 * coordinator actions in the same order the ASL does.
 */
import { afterAll, beforeAll } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import type { HumanDecision } from '../../shared/engine/verify.ts';
import { ConflictError } from '../../shared/errors.ts';
import { type Catalog, loadCatalog } from '../../shared/plan/catalog.ts';
import type { Plan, PlanStep, StepError } from '../../shared/plan/schema.ts';
import type { DomainEvent, EventPublisher } from '../../shared/ports/events.ts';
import type { Executions, MachineName, StartResult } from '../../shared/ports/executions.ts';
import type { Store } from '../../shared/ports/store.ts';
import {
  type Coordinator,
  type CoordinatorConfig,
  createCoordinator,
  type FailureDecision,
} from '../../shared/services/coordinator.ts';
import { startDynalite, type TestDynamo } from './dynalite.ts';
import { at, uniqueId } from './store-fixtures.ts';

export const TEST_CATALOG: Catalog = loadCatalog({
  capabilities: [
    {
      target: 'tool:test.echo',
      description: 'Returns what it is given.',
      sideEffect: 'none',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
    },
    {
      target: 'tool:test.count',
      description: 'Needs a whole number.',
      sideEffect: 'none',
      inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
      outputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    },
    {
      target: 'agent:test.writer',
      description: 'Writes a draft.',
      sideEffect: 'none',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', required: ['draft'], properties: { draft: { type: 'string' } } },
    },
    {
      target: 'human:test.approver',
      description: 'A person approves.',
      sideEffect: 'none',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
    },
  ],
});

/** A plan step with the contracts of its target copied from the test catalog (the validator wants them equal). */
export function step(id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep {
  const target = overrides.target === undefined ? 'tool:test.echo' : overrides.target;
  const capability = target === null ? undefined : TEST_CATALOG.get(target);
  return {
    id,
    title: `Step ${id}`,
    target,
    dependsOn,
    input: { from: id },
    ...(capability ? { inputSchema: capability.inputSchema, outputSchema: capability.outputSchema } : {}),
    ...overrides,
  };
}

export const planOf = (steps: PlanStep[]): Plan => ({
  schemaVersion: 1,
  revision: 1,
  objective: 'Test the engine',
  steps,
});

/** What the scripted executor does for one attempt of a step. */
export type Script = (attempt: number) => { output: unknown; confidence?: number } | { error: StepError };

interface Waiter {
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
}

/** Executions that record everything, never run anything by themselves and let a test answer task tokens. */
export class RecordingExecutions implements Executions {
  readonly startCalls: { machine: MachineName; name: string; input: Record<string, unknown> }[] = [];
  readonly started = new Map<string, Record<string, unknown>>();
  readonly stopped: { executionId: string; error: string }[] = [];
  readonly answered = new Map<string, unknown>();
  /** Step executions started and not yet taken by a driver. */
  readonly queue: { executionId: string; input: Record<string, unknown> }[] = [];
  readonly #waiters = new Map<string, Waiter>();

  async start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult> {
    this.startCalls.push({ machine, name, input: { ...input } });
    const executionId = `arn:test:execution:${machine}:${name}`;
    if (this.started.has(executionId)) return { executionId, started: false };
    this.started.set(executionId, { ...input });
    if (machine === 'step') this.queue.push({ executionId, input: { ...input } });
    return { executionId, started: true };
  }

  /** Registers a token before it is handed out (as the local runtime does); resolves when someone answers it. */
  waitFor(token: string): Promise<unknown> {
    return new Promise((resolve, reject) => this.#waiters.set(token, { resolve, reject }));
  }

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    if (this.answered.has(taskToken)) throw new ConflictError(`token ${taskToken} was already answered`);
    this.answered.set(taskToken, output);
    this.#waiters.get(taskToken)?.resolve(output);
  }

  async sendTaskFailure(taskToken: string, error: string, cause: string): Promise<void> {
    if (this.answered.has(taskToken)) throw new ConflictError(`token ${taskToken} was already answered`);
    this.answered.set(taskToken, { error, cause });
    const failure = new Error(cause);
    failure.name = error;
    this.#waiters.get(taskToken)?.reject(failure);
  }

  async stop(executionId: string, error: string): Promise<void> {
    this.stopped.push({ executionId, error });
  }

  /** How many step executions were really started (not duplicates) for a step. */
  startsOf(stepId: string): number {
    return [...this.started.values()].filter((input) => input.stepId === stepId).length;
  }
}

export class RecordingPublisher implements EventPublisher {
  readonly events: DomainEvent[] = [];
  async publish(events: readonly DomainEvent[]): Promise<void> {
    this.events.push(...events);
  }
  of(type: string, stepId?: string): DomainEvent[] {
    return this.events.filter((e) => e.detailType === type && (stepId === undefined || e.detail.stepId === stepId));
  }
}

export interface Harness {
  readonly store: Store;
  readonly executions: RecordingExecutions;
  readonly events: RecordingPublisher;
  readonly coordinator: Coordinator;
  /** Failure decisions per step, in order (what RecordFailure answered). */
  readonly failures: Map<string, FailureDecision[]>;
  /** Scripts per step id; a step without one succeeds with `{ ok: true }`. */
  readonly scripts: Map<string, Script>;
}

export const TEST_CONFIG: CoordinatorConfig = {
  runDeadlineSeconds: 3600,
  retryBaseSeconds: 1,
  retryCapSeconds: 60,
  maxSteps: 64,
  maxDepth: 16,
  traceRetention: 'last',
};

/** Wraps the harness's store (a test counting or failing calls); the coordinator sees the wrapper. */
export type StoreWrapper = (store: Store) => Store;

export function createHarness(
  dynamo: TestDynamo,
  config: Partial<CoordinatorConfig> = {},
  wrapStore: StoreWrapper = (store) => store,
): Harness {
  const store = wrapStore(createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }));
  const executions = new RecordingExecutions();
  const events = new RecordingPublisher();
  let ids = 0;
  const coordinator = createCoordinator({
    store,
    executions,
    events,
    catalog: TEST_CATALOG,
    clock: () => new Date(),
    newId: () => `id-${++ids}`,
    config: { ...TEST_CONFIG, ...config },
  });
  return { store, executions, events, coordinator, failures: new Map(), scripts: new Map() };
}

/**
 * One dynalite for the calling test file, started in its beforeAll and stopped in its afterAll; returns a factory
 * of harnesses on it (each on the same server, for use inside tests).
 */
export function useCoordinatorHarness(): (config?: Partial<CoordinatorConfig>, wrapStore?: StoreWrapper) => Harness {
  let dynamo: TestDynamo | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo?.stop();
  });
  return (config, wrapStore) => {
    if (dynamo === undefined) throw new Error('useCoordinatorHarness: harnesses are made inside tests');
    return createHarness(dynamo, config, wrapStore);
  };
}

/** A run in `planning` with its candidate plan, as the planner leaves it; its waiter token is registered. */
export async function createPlannedRun(h: Harness, plan: Plan): Promise<{ runId: string; waiter: Promise<unknown> }> {
  const runId = uniqueId('run');
  await h.store.createRun({
    runId,
    status: 'planning',
    objective: plan.objective,
    mode: 'SUBMITTED',
    candidatePlan: plan,
    revision: 0,
    createdAt: at(0),
    updatedAt: at(0),
    replans: 0,
  });
  return { runId, waiter: h.executions.waitFor(`waiter-${runId}`) };
}

/** The scripted step executor: records the attempt like the real one and answers `{ ok }`. */
async function execute(h: Harness, ref: { runId: string; stepId: string; generation: number }, attempt: number) {
  const script: Script = h.scripts.get(ref.stepId) ?? (() => ({ output: { ok: true } }));
  const result = script(attempt);
  const base = {
    ...ref,
    attempt,
    target: 'tool:test',
    startedAt: new Date().toISOString(),
    evidence: { scripted: true },
  } as const;
  await h.store.putAttempt({ ...base, outcome: 'running' });
  if ('error' in result) {
    await h.store.updateAttempt({ ...base, outcome: 'failed', error: result.error });
    return { ok: false as const, error: result.error };
  }
  await h.store.updateAttempt({
    ...base,
    outcome: 'succeeded',
    output: result.output,
    confidence: result.confidence ?? null,
  });
  return { ok: true as const };
}

let tokens = 0;

/**
 * Parks on a fresh token for a gate or review, as AwaitApproval / AwaitReview do. A token failed with
 * `States.Timeout` (a test simulating the task timeout) goes the way of the timeout Catch: expireApproval.
 */
async function awaitPerson(
  h: Harness,
  ref: { runId: string; stepId: string; generation: number },
  kind: 'approval' | 'review',
): Promise<HumanDecision | 'expired'> {
  const taskToken = `gate-${++tokens}`;
  const answer = h.executions.waitFor(taskToken);
  await h.coordinator.requestApproval({ ...ref, kind, taskToken });
  try {
    return (await answer) as HumanDecision;
  } catch (error) {
    if ((error as Error).name !== 'States.Timeout') throw error;
    await h.coordinator.expireApproval({ ...ref, kind });
    return 'expired';
  }
}

/** One step execution, following the step machine: claim, route, execute/gate, retry, verify, complete. */
export async function runStepMachine(h: Harness, executionId: string, input: Record<string, unknown>): Promise<void> {
  const ref = { runId: String(input.runId), stepId: String(input.stepId), generation: Number(input.generation) };
  const claim = await h.coordinator.claimStep({ ...ref, executionId });
  if (claim.outcome !== 'claimed') return;
  let attempt = claim.attempt;
  let decision: HumanDecision | 'expired' | undefined =
    claim.kind === 'human' ? await awaitPerson(h, ref, 'approval') : undefined;
  let error: StepError | undefined;
  for (;;) {
    if (decision === 'expired') return;
    if (error === undefined && claim.kind !== 'human' && decision === undefined) {
      const exec = await execute(h, ref, attempt);
      if (!exec.ok) error = exec.error;
    }
    if (error === undefined) {
      const verify = await h.coordinator.verifyStep({ ...ref, attempt, decision });
      if (verify.verdict === 'pass') {
        await h.coordinator.completeStep({ ...ref, attempt });
        return;
      }
      if (verify.verdict === 'review') {
        decision = await awaitPerson(h, ref, 'review');
        continue;
      }
      error = verify.error;
    }
    const failure = await h.coordinator.recordFailure({ ...ref, attempt, error: error as StepError });
    h.failures.set(ref.stepId, [...(h.failures.get(ref.stepId) ?? []), failure]);
    if (failure.decision !== 'retry') return;
    attempt = failure.attempt;
    error = undefined;
    decision = undefined;
  }
}

/** Runs every started step execution (concurrently, as they come) until none is left. */
export async function drainSteps(h: Harness): Promise<void> {
  const running = new Set<Promise<void>>();
  for (;;) {
    for (let next = h.executions.queue.shift(); next; next = h.executions.queue.shift()) {
      const run: Promise<void> = runStepMachine(h, next.executionId, next.input).finally(() => running.delete(run));
      running.add(run);
    }
    if (running.size === 0) return;
    await Promise.race(running);
  }
}

/** The run machine end to end: StartRun, AwaitRunFinished (token), the steps, FinalizeRun once the waiter answers. */
export async function runPlan(h: Harness, plan: Plan) {
  const { runId, waiter } = await createPlannedRun(h, plan);
  await h.coordinator.startRun({ runId });
  await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` });
  await drainSteps(h);
  const answered = h.executions.answered.has(`waiter-${runId}`);
  if (answered) await waiter;
  await h.coordinator.finalizeRun({ runId, timedOut: null, error: null });
  const run = await h.store.getRun(runId);
  const steps = new Map((await h.store.listSteps(runId)).map((s) => [s.stepId, s]));
  return { runId, run, steps, answered };
}
