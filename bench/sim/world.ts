/**
 * One seed's world: the virtual clock, the in-memory store and run log, two shells (two warm Lambdas: a batch may
 * land on either, so a shell's copy of a run goes stale and its commit finds its version taken), the run mailboxes,
 * Step Functions and the timers, and the actors; and the runs the seed starts, each with its generated plan, a run
 * machine and a client.
 *
 * The adapters as the world reaches them: every call takes a seeded, virtual latency (so calls in flight interleave
 * by the seed), the shells' calls meet the injected faults, and the run log tells the recorder of every batch that
 * committed, including one whose writer never heard so.
 */

import { createMemoryRunLog } from '../../shared/adapters/memory/run-log.ts';
import { createMemoryStore, type MemoryStore, type MemoryStorePort } from '../../shared/adapters/memory/store.ts';
import { compensatedStepId, isCompensationStepId } from '../../shared/engine/compensation.ts';
import { planView, type RunSettings } from '../../shared/engine/run/state.ts';
import { runExecutionName } from '../../shared/ports/executions.ts';
import type { RunRecord } from '../../shared/ports/records/runs.ts';
import type { CommittedBatch, RunLog } from '../../shared/ports/run-log.ts';
import { createRunShell } from '../../shared/services/runs/shell.ts';
import { createStartPacer } from '../../shared/services/runs/start-pacer.ts';
import { afterFinish, budgetRaiser, replanner, scheduleClient } from './actors/client.ts';
import { runCompensation, runMachine, runStep, type StepInput } from './actors/machines.ts';
import { People } from './actors/people.ts';
import { type ActorContext, SimExecutions, SimTimers, type Spawn, TokenDesk } from './actors/platform.ts';
import { Faults, InjectedFault, isInjectedFault, type SimFaultRule } from './faults.ts';
import { type BatchHandler, SimMailbox } from './mailbox.ts';
import { generateSimPlan, simSettings, simTargets } from './plans.ts';
import { Recorder } from './recorder.ts';
import { Rng, Scheduler } from './scheduler.ts';

/** Each shell's pace of step starts: low enough that the wider plans and busy moments defer some starts. */
const SIM_START_PACING = { ratePerSecond: 20, burst: 10, maxWaitMs: 500 } as const;

export interface IoEnv {
  readonly sched: Scheduler;
  readonly faults: Faults;
  readonly recorder: Recorder;
  /** The stream latencies are drawn from. */
  readonly latency: Rng;
}

/** A round trip to the table: a few virtual milliseconds, now and then a slow one. */
export const roundTrip = (env: IoEnv, min = 1, max = 12): Promise<void> =>
  env.sched.sleep(env.latency.chance(0.03) ? env.latency.int(50, 400) : env.latency.int(min, max));

/**
 * A write at `point` under the faults: throttled (nothing written), crash-after (written, the answer lost), or a
 * timeout that is one or the other.
 */
async function faultedWrite<T>(env: IoEnv, write: () => Promise<T>): Promise<T> {
  await roundTrip(env, 2, 20);
  const fault = env.faults.draw('store.write');
  const landed =
    fault === undefined || fault.fault === 'crash-after' || (fault.fault === 'timeout' && fault.rng.chance(0.5));
  if (!landed) throw new InjectedFault('store.write', fault?.fault ?? 'throttle');
  const result = await write();
  if (fault !== undefined) throw new InjectedFault('store.write', fault.fault);
  return result;
}

async function faultedRead<T>(env: IoEnv, read: () => Promise<T>): Promise<T> {
  await roundTrip(env);
  const fault = env.faults.draw('store.read');
  if (fault !== undefined) throw new InjectedFault('store.read', fault.fault);
  return read();
}

/** The run log the shells commit to: faulted, and every landed commit recorded. */
export function simRunLog(env: IoEnv, inner: RunLog): RunLog {
  return {
    last: (runId) => faultedRead(env, () => inner.last(runId)),
    commit: (batch: CommittedBatch) =>
      faultedWrite(env, async () => {
        const landed = await inner.commit(batch);
        if (landed) env.recorder.committed(batch);
        else env.recorder.tally('commit: version taken');
        return landed;
      }),
    project: (batch) => faultedWrite(env, () => inner.project(batch)),
  };
}

/** The store as the shells load runs from it: reads faulted. */
export function shellStore(env: IoEnv, inner: MemoryStore): MemoryStorePort {
  return {
    ...inner,
    getRun: (runId) => faultedRead(env, () => inner.getRun(runId)),
    listSteps: (runId) => faultedRead(env, () => inner.listSteps(runId)),
    listRunApprovals: (runId, options) => faultedRead(env, () => inner.listRunApprovals(runId, options)),
    getPlanRevision: (runId, revision) => faultedRead(env, () => inner.getPlanRevision(runId, revision)),
  };
}

/**
 * The store as executions, people and the client read and write it: latency, no faults (their own retries are
 * not what the simulation tests; the decider's answers to what they send are).
 */
export function actorStore(env: IoEnv, inner: MemoryStore): MemoryStorePort {
  const slow =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await roundTrip(env);
      return call(...args);
    };
  return {
    createRun: slow(inner.createRun),
    getRun: slow(inner.getRun),
    listRuns: slow(inner.listRuns),
    getStep: slow(inner.getStep),
    listSteps: slow(inner.listSteps),
    transitionStep: slow(inner.transitionStep),
    listRunApprovals: slow(inner.listRunApprovals),
    getPlanRevision: slow(inner.getPlanRevision),
    putPlanRevision: slow(inner.putPlanRevision),
    putWatches: slow(inner.putWatches),
    putAttempt: slow(inner.putAttempt),
    getAttempt: slow(inner.getAttempt),
    updateAttempt: slow(inner.updateAttempt),
    listWatchers: slow(inner.listWatchers),
  };
}

/** Where every world's clock starts. */
export const EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

export interface WorldOptions {
  readonly seed: number;
  readonly runs: number;
  readonly faults: readonly SimFaultRule[];
  /** Hash the committed events (the trace) as they commit. */
  readonly trace: boolean;
}

export interface World {
  readonly seed: number;
  readonly sched: Scheduler;
  readonly recorder: Recorder;
  readonly store: MemoryStore;
  readonly faults: Faults;
  readonly mailbox: SimMailbox;
  readonly settings: RunSettings;
}

export function buildWorld(options: WorldOptions): World {
  const { seed } = options;
  const sched = new Scheduler(Rng.of(seed, 'ties'), EPOCH);
  const faults = new Faults(options.faults, seed);
  const recorder = new Recorder({ trace: options.trace });
  const store = createMemoryStore({ now: sched.clock });
  const env: IoEnv = { sched, faults, recorder, latency: Rng.of(seed, 'latency') };
  const settings = simSettings(Rng.of(seed, 'settings'));
  const viewOf = (plan: Parameters<typeof planView>[0]) => planView(plan, simTargets);
  const tokens = new TokenDesk(sched);
  const handlers: BatchHandler[] = [];
  const mailbox = new SimMailbox({
    sched,
    faults,
    rng: Rng.of(seed, 'mailbox'),
    handlers,
    onError: (error, runId, commands) =>
      recorder.problem(
        runId,
        'decider-threw',
        `a batch of ${commands.map((c) => c.kind).join(', ')} threw: ${(error as Error).stack ?? String(error)}`,
      ),
    onDeadLetter: (runId, commands, error) =>
      recorder.problem(
        runId,
        'dead-letter',
        `the mailbox gave up on ${commands.map((c) => c.kind).join(', ')}: ${(error as Error).message}`,
      ),
  });
  const latency = () => roundTrip(env);
  let spawn: Spawn = async () => undefined;
  const executions = new SimExecutions({
    sched,
    tokens,
    latency,
    faults,
    spawn: (machine, exec, input) => spawn(machine, exec, input),
    onCrash: (name, error) => {
      const runId = [...recorder.runs.keys()].find((id) => name.includes(id)) ?? '';
      recorder.problem(runId, 'sim-crashed', `execution ${name} threw: ${(error as Error).stack ?? String(error)}`);
    },
  });
  const timers = new SimTimers(sched, mailbox, latency);
  // One log and one table, two shells.
  const runLog = simRunLog(env, createMemoryRunLog(store));
  for (let i = 0; i < 2; i++) {
    const shell = createRunShell({
      store: shellStore(env, store),
      runLog,
      executions,
      timers,
      mailbox,
      // A small pace, so a wide release or many runs at once have starts deferred through the run's decider.
      pacer: createStartPacer({
        ...SIM_START_PACING,
        now: () => sched.now,
        sleep: (ms) => sched.sleep(ms),
      }),
      clock: sched.clock,
      settings,
      targets: simTargets,
    });
    handlers.push(shell.handle);
  }
  let people: People | undefined;
  const ctx: ActorContext = {
    seed,
    sched,
    mailbox,
    store: actorStore(env, store),
    tokens,
    recorder,
    faults,
    settings,
    notice: (...args) => people?.notice(...args),
  };
  people = new People(ctx);
  recorder.onCommit(people.onCommit);
  recorder.onCommit(replanner(ctx));
  recorder.onCommit(afterFinish(ctx));
  recorder.onCommit(budgetRaiser(ctx));

  spawn = async (machine, exec, raw) => {
    const input = raw as unknown as StepInput;
    const run = recorder.run(input.runId);
    if (run === undefined) throw new Error(`an execution ${exec.name} of an unknown run ${input.runId}`);
    if (machine === 'run') return runMachine(ctx, exec, input, run.sim);
    if (isCompensationStepId(input.stepId)) return runCompensation(ctx, exec, input);
    const planStep = run.replica.plan?.byId.get(input.stepId);
    const profile = run.sim.profiles.get(input.stepId);
    if (planStep === undefined || profile === undefined)
      throw new Error(
        `execution ${exec.name} of ${input.stepId}, which the plan does not have (${compensatedStepId(input.stepId)})`,
      );
    return runStep(ctx, exec, input, planStep, profile);
  };

  /** The API starts the run's machine; refused (a fault), it is asked again, as the client retries a 503. */
  const startRunMachine = async (runId: string): Promise<void> => {
    for (;;) {
      try {
        await executions.start('run', runExecutionName(runId), { runId });
        return;
      } catch (error) {
        if (!isInjectedFault(error)) throw error;
        await sched.sleep(1_000);
      }
    }
  };

  const arrivals = Rng.of(seed, 'arrivals');
  for (let index = 0; index < options.runs; index++) {
    const runId = `sim-${seed}-${index}`;
    const sim = generateSimPlan(Rng.of(seed, `plan:${index}`));
    sched.after(arrivals.int(0, 5_000), () => {
      const at = sched.iso();
      const record: RunRecord = {
        runId,
        status: 'planning',
        objective: sim.plan.objective,
        revision: 0,
        createdAt: at,
        updatedAt: at,
        replans: 0,
      };
      void store.createRun(record);
      const run = recorder.startRun({ run: record, index, sim, createdAt: sched.now, settings, viewOf });
      scheduleClient(ctx, run);
      void startRunMachine(runId);
    });
  }
  return { seed, sched, recorder, store, faults, mailbox, settings };
}
