/**
 * The chaos suite: boots the embedded stack in process (conformance pack, in memory, compressed backoff) with the
 * fault spec, drives `runs` generated plans through the HTTP API, `concurrency` at a time, answers their approvals,
 * then waits for the stack to go quiet and checks every invariant on what each run left.
 *
 * Faults are handed to the stack both ways, `CAIRN_FAULTS` / `CAIRN_FAULTS_SEED` in the environment and
 * `faults` / `faultsSeed` options, so the suite injects them on any build that reads either; a build that knows
 * neither runs fault-free, and the report says how many faults were injected when the stack tells.
 */

import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/boot.ts';
import type { AwsQuotasOptions } from '../../infra/local/quotas/aws-quotas.ts';
import { withPlannedSteps } from '../../shared/engine/run/planned.ts';
import { type ApprovalCounts, type ApprovalResponder, startApprovalResponder } from './approvals.ts';
import { createApiClient } from './client.ts';
import { type ActionCounts, type ActionOutcome, driveRun } from './drive.ts';
import { checkRun } from './invariants/index.ts';
import type { RunObservation, Violation } from './invariants/types.ts';
import { observeRun, readLedger } from './observe.ts';
import { CHAOS_WEBHOOK_SOURCE, type ChaosPlan, generatePlan, runSeed } from './plan-generator.ts';

/** The suite's own signing secret: the stack it boots holds it for the suite's webhook source. */
const CHAOS_WEBHOOK_SECRET = 'chaos-suite-webhook-secret';

export interface ChaosOptions {
  readonly runs: number;
  readonly seed: number;
  /** `point:fault@probability,...` (CAIRN_FAULTS); empty: none. */
  readonly faults: string;
  /** Default: the suite's seed. */
  readonly faultsSeed?: number;
  readonly concurrency: number;
  /** How long a run may take to end (ms). */
  readonly boundMs: number;
  /**
   * Every Task's Retry pause (ms) in place of the machines' own (1 s doubling to 30 s, full jitter), which
   * under faults would make the suite wait, not test; 'asl': keep the machines' own. Default 50.
   */
  readonly retryIntervalMs?: number | 'asl';
  /** Read the runs back with the faults still on (default: paused once the stack has gone quiet). */
  readonly readUnderFaults?: boolean;
  /** Run only these run indexes of the seed (to re-run a failing one). */
  readonly only?: readonly number[];
  readonly cancelRate?: number;
  readonly invalidateRate?: number;
  /** The AWS account quotas (npm start --aws-quotas) with these lowered; `false`: none. Default: on, AWS's numbers. */
  readonly awsQuotas?: AwsQuotasOptions | false;
  /** One line per finished run and per stage (default: nothing). */
  readonly log?: (line: string) => void;
}

export interface ChaosResult {
  readonly runs: readonly RunObservation[];
  /** Each run's generated plan and actions, by run id. */
  readonly plans: ReadonlyMap<string, ChaosPlan>;
  /** What each run's actions met (when made, what the API answered), by run id. */
  readonly acted: ReadonlyMap<string, readonly ActionOutcome[]>;
  /**
   * For each run with a violation, its records as the store holds them (run, steps with their generations' keys,
   * stale releases and history; outputs left out): what the API's views do not show, to find a cause from.
   */
  readonly records: ReadonlyMap<string, StoreRecords>;
  readonly violations: readonly Violation[];
  /** Runs the suite could not drive or read at all (an API that never answered), with why. */
  readonly errors: readonly { readonly label: string; readonly message: string }[];
  readonly actions: ActionCounts;
  readonly approvals: ApprovalCounts;
  /** Faults injected by point and kind, when the stack reports them. */
  readonly faultsInjected?: Readonly<Record<string, number>>;
  /** Calls each fault point drew for (what its faults' counts are out of), when the stack reports them. */
  readonly faultCalls?: Readonly<Record<string, number>>;
  /** What the AWS quotas refused and the platform absorbed, by kind (absent: quotas off). */
  readonly throttles?: Readonly<Record<string, number>>;
  readonly wallMs: number;
  /** Whether the stack went quiet after the runs (every execution over, the bus drained) within the bound. */
  readonly settled: boolean;
}

export const DEFAULT_RETRY_INTERVAL_MS = 50;

export interface StoreRecords {
  readonly run: unknown;
  readonly steps: readonly unknown[];
}

/** A run's records as the store holds them, outputs left out (they can be large and tell nothing of the engine). */
async function readRecords(stack: LocalStack, runId: string): Promise<StoreRecords> {
  const withoutOutputs = <T extends object>(record: T): Omit<T, 'output'> => {
    const { output: _output, ...rest } = record as T & { output?: unknown };
    return rest;
  };
  const run = await stack.store.getRun(runId);
  const plan =
    run === undefined || run.revision < 1 ? undefined : await stack.store.getPlanRevision(runId, run.revision);
  const steps = run === undefined ? [] : withPlannedSteps(run, plan?.plan, await stack.store.listSteps(runId));
  return {
    run: run === undefined ? null : { ...run, submittedPlan: undefined, candidatePlan: undefined },
    steps: steps.map((step) => ({
      ...withoutOutputs(step),
      ...(step.history === undefined ? {} : { history: step.history.map(withoutOutputs) }),
    })),
  };
}

/** The faults a stack injected, if it says: `faults.counts()`/`faults.injected()` or `stats().faults`. */
export function injectedFaults(stack: LocalStack): Record<string, number> | undefined {
  const loose = stack as unknown as {
    faults?: Record<string, unknown>;
    stats(): Record<string, unknown>;
  };
  for (const name of ['counts', 'injected', 'stats']) {
    const read = loose.faults?.[name];
    if (typeof read === 'function') return (read as () => Record<string, number>).call(loose.faults);
  }
  const fromStats = loose.stats().faults;
  return typeof fromStats === 'object' && fromStats !== null ? (fromStats as Record<string, number>) : undefined;
}

async function bootWithFaults(options: ChaosOptions): Promise<{ stack: LocalStack; restore: () => void }> {
  const saved = {
    faults: process.env.CAIRN_FAULTS,
    seed: process.env.CAIRN_FAULTS_SEED,
    secrets: process.env.CAIRN_WEBHOOK_SECRETS,
  };
  process.env.CAIRN_WEBHOOK_SECRETS = JSON.stringify({ [CHAOS_WEBHOOK_SOURCE]: CHAOS_WEBHOOK_SECRET });
  const faultsSeed = options.faultsSeed ?? options.seed;
  if (options.faults !== '') {
    process.env.CAIRN_FAULTS = options.faults;
    process.env.CAIRN_FAULTS_SEED = String(faultsSeed);
  }
  const restore = () => {
    for (const [name, value] of [
      ['CAIRN_FAULTS', saved.faults],
      ['CAIRN_FAULTS_SEED', saved.seed],
      ['CAIRN_WEBHOOK_SECRETS', saved.secrets],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  const retryIntervalMs = options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS;
  const stackOptions = {
    conformance: true,
    backoffMs: 5,
    demoDelayMs: 0,
    ...(retryIntervalMs === 'asl' ? {} : { retryIntervalMs }),
    ...(options.faults === '' ? {} : { faults: options.faults, faultsSeed }),
    awsQuotas: options.awsQuotas ?? {},
  } as LocalStackOptions;
  try {
    return { stack: await startLocalStack(stackOptions), restore };
  } catch (error) {
    restore();
    throw error;
  }
}

/** Runs `work` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

/**
 * Waits for the stack to go quiet while the suite's person still answers: a gate that asked for a decision as the
 * stack settled (a run reopened late, say) is decided after it, and what the decision starts (a ledger step) would
 * land after the ledger was read, or the run be read waiting for a person the suite had stopped being (seed 55 run
 * 198). Quiet means settled twice running with nothing left to decide; false when `boundMs` ran out first.
 */
async function quiesce(stack: LocalStack, responder: ApprovalResponder, boundMs: number): Promise<boolean> {
  const deadline = performance.now() + boundMs;
  const within = <T>(work: Promise<T>): Promise<T | undefined> =>
    Promise.race([
      work,
      new Promise<undefined>((resolve) =>
        setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now())).unref(),
      ),
    ]);
  for (let quiet = 0; quiet < 2; ) {
    if (performance.now() >= deadline) return false;
    if ((await within(stack.settled().then(() => true))) !== true) return false;
    const decided = await within(responder.flush());
    if (decided === undefined) return false;
    quiet = decided === 0 ? quiet + 1 : 0;
  }
  return true;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const { stack, restore } = await bootWithFaults(options);
  const api = createApiClient(stack.url, stack.token);
  const responder = startApprovalResponder(api);
  const namespace = `chaos${Date.now().toString(36)}`;
  const actions: ActionCounts = {
    cancels: 0,
    invalidations: 0,
    invalidationsRefused: 0,
    webhooks: 0,
    actionsFailed: 0,
  };
  const driven: {
    runId: string;
    label: string;
    endedAfterMs: number | null;
    plan: ChaosPlan;
    acted: readonly ActionOutcome[];
  }[] = [];
  const errors: { label: string; message: string }[] = [];
  const indexes = options.only ?? Array.from({ length: options.runs }, (_, i) => i);
  let settled = false;
  try {
    log(
      `booted in ${Math.round(performance.now() - started)} ms; ${indexes.length} run(s), ${options.concurrency} at a time`,
    );
    await pool(indexes, options.concurrency, async (index) => {
      const seed = runSeed(options.seed, index);
      const label = `seed ${options.seed} run ${index}`;
      const plan = generatePlan(seed, {
        namespace,
        ...(options.cancelRate === undefined ? {} : { cancelRate: options.cancelRate }),
        ...(options.invalidateRate === undefined ? {} : { invalidateRate: options.invalidateRate }),
      });
      try {
        const result = await driveRun({
          api,
          plan,
          objective: `chaos ${label}: ${plan.shape} of ${plan.steps.length} steps`,
          idempotencyKey: `${namespace}-${index}`,
          boundMs: options.boundMs,
          counts: actions,
          webhookSecret: CHAOS_WEBHOOK_SECRET,
          onStarted: (runId) => responder.watch(runId, seed),
        });
        driven.push({ ...result, label, plan });
        log(
          `${label}: ${plan.shape}/${plan.steps.length} ${result.endedAfterMs === null ? 'NOT ENDED' : `ended after ${result.endedAfterMs} ms`}`,
        );
      } catch (error) {
        errors.push({ label, message: error instanceof Error ? error.message : String(error) });
      }
    });
    // Late work (a straggling attempt, a redelivered event) lands before the runs are read: that is what the
    // after-finish and ledger invariants look for.
    settled = await quiesce(stack, responder, options.boundMs);
    await responder.stop();
    // What is checked is what the runs left once the stack went quiet: read it fault-free, else a run whose reads
    // keep failing (a step's details are many store reads) goes unchecked. The drive above read under faults.
    const faultsInjected = injectedFaults(stack);
    const faultCalls = stack.faults?.calls();
    const throttles = stack.quotas === undefined ? undefined : stack.stats().throttles;
    if (!options.readUnderFaults) stack.faults?.pause(true);
    const reader = createApiClient(stack.url, stack.token, { attempts: 40 });
    const ledger = await readLedger(reader);
    const runs: RunObservation[] = [];
    await pool(driven, options.concurrency, async (run) => {
      try {
        runs.push(await observeRun(reader, { ...run, boundMs: options.boundMs, quiet: settled }, ledger));
      } catch (error) {
        errors.push({
          label: run.label,
          message: `reading ${run.runId}: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
    });
    const violations = runs.flatMap(checkRun);
    const records = new Map<string, StoreRecords>();
    for (const runId of new Set(violations.map((v) => v.runId))) {
      const read = await readRecords(stack, runId).catch(() => undefined);
      if (read !== undefined) records.set(runId, read);
    }
    return {
      runs,
      plans: new Map(driven.map((run) => [run.runId, run.plan])),
      acted: new Map(driven.map((run) => [run.runId, run.acted])),
      records,
      violations,
      errors,
      actions,
      approvals: { ...responder.counts },
      ...(faultsInjected === undefined ? {} : { faultsInjected }),
      ...(faultCalls === undefined ? {} : { faultCalls }),
      ...(throttles === undefined ? {} : { throttles }),
      wallMs: Math.round(performance.now() - started),
      settled,
    };
  } finally {
    await responder.stop();
    await stack.close();
    restore();
  }
}
