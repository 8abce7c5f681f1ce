/**
 * The embedded stack for integration tests: one per test file, with the conformance pack, compressed retry backoff
 * and instant demo capabilities. Helpers build plans from the stack's own catalog contracts and wait on run status.
 */
import { afterAll, beforeAll } from 'vitest';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/boot.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';

export type { LocalStack, LocalStackOptions };

/** What every test stack has: the conformance pack, retries without their backoff, demo capabilities at once. */
export const TEST_STACK_OPTIONS = {
  conformance: true,
  backoffMs: 5,
  demoDelayMs: 0,
  token: 'test-token',
} as const satisfies LocalStackOptions;

/** A test stack; `options` add to (or override) the test stack's. */
export const startTestStack = (options: LocalStackOptions = {}): Promise<LocalStack> =>
  startLocalStack({ ...TEST_STACK_OPTIONS, ...options });

/**
 * One test stack for the calling test file, started in its beforeAll and closed in its afterAll. What it returns
 * stands for the stack inside the tests (each property is the started stack's), so a file keeps writing `stack.x`.
 * `options` may be a function, called in beforeAll, for what the file only builds then.
 */
export function useTestStack(options: LocalStackOptions | (() => LocalStackOptions) = {}): LocalStack {
  let started: LocalStack | undefined;
  beforeAll(async () => {
    started = await startTestStack(typeof options === 'function' ? options() : options);
    // The machine may be shared and slow: synthesizing the stack's state machines takes a while there.
  }, 300_000);
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as LocalStack, {
    get(_, key) {
      // Not a thenable: `await` on the stand-in must not reach for a stack that has not started.
      if (key === 'then') return undefined;
      if (!started) throw new Error(`useTestStack: stack.${String(key)} is used inside tests, once beforeAll ran`);
      const value = Reflect.get(started, key) as unknown;
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

export interface RunView {
  runId: string;
  status: string;
  revision: number;
  steps: {
    id: string;
    status: string;
    attempts: number;
    generation: number | null;
    output: unknown;
    error: { code: string; message: string } | null;
    startedAt: string | null;
    finishedAt: string | null;
  }[];
  terminal?: { state: string; reason: string; evidence: Record<string, unknown> };
}

/** A plan step for `target` carrying the catalog's contracts. */
export function step(stack: LocalStack, id: string, target: string, fields: Partial<PlanStep> = {}): PlanStep {
  const capability = stack.catalog.get(target);
  if (!capability) throw new Error(`no capability ${target} in the local catalog`);
  return {
    id,
    title: `Step ${id}`,
    target,
    dependsOn: [],
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...fields,
  };
}

export const plan = (objective: string, steps: PlanStep[]) => ({ schemaVersion: 1, revision: 1, objective, steps });

export async function getRun(stack: LocalStack, runId: string): Promise<RunView> {
  // Every page of the run's steps (a page holds 100 by default).
  let view: RunView | undefined;
  let cursor: string | undefined;
  do {
    const path = `/runs/${runId}${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`;
    const { status, json } = await stack.request('GET', path);
    if (status !== 200) throw new Error(`GET ${path} answered ${status}: ${JSON.stringify(json)}`);
    const page = json as RunView & { nextCursor?: string };
    view = view === undefined ? page : { ...view, steps: [...view.steps, ...page.steps] };
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const { nextCursor: _next, ...whole } = view as RunView & { nextCursor?: string };
  return whole;
}

const TERMINAL = new Set(['complete', 'failed', 'cancelled']);

/** Polls until the run is terminal (or `until` holds); fails after `timeoutMs`. */
export async function waitForRun(
  stack: LocalStack,
  runId: string,
  until: (run: RunView) => boolean = (run) => TERMINAL.has(run.status),
  timeoutMs = 30_000,
): Promise<RunView> {
  const started = Date.now();
  for (;;) {
    const run = await getRun(stack, runId);
    if (until(run)) {
      // What a finished run's last writes announced reaches the bus and the audit log a moment later, as on AWS.
      if (TERMINAL.has(run.status)) await stack.settled();
      return run;
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(`run ${runId} did not settle within ${timeoutMs} ms: ${JSON.stringify(summary(run))}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const summary = (run: RunView) =>
  `${run.status}: ${run.steps.map((s) => `${s.id}=${s.status}/a${s.attempts}`).join(' ')}`;

export const statusOf = (run: RunView, id: string) => run.steps.find((s) => s.id === id)?.status;
export const stepOf = (run: RunView, id: string) => {
  const found = run.steps.find((s) => s.id === id);
  if (!found) throw new Error(`no step ${id} in run ${run.runId}`);
  return found;
};

/** Waits (up to 20 s) until the execution named `name` has started and ended. */
export async function executionEnded(stack: LocalStack, name: string): Promise<void> {
  for (let tries = 0; tries < 800; tries++) {
    const info = stack.executions.list().find((e) => e.name === name);
    if (info !== undefined && info.status !== 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`execution ${name} did not end`);
}

/**
 * The generations whose step executions the run started, by step id (from the executions' deterministic names,
 * `<runId>-<stepId>-g<generation>`): each generation once per execution, so a generation started twice shows twice.
 */
export function executedGenerations(stack: LocalStack, runId: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const info of stack.executions.list()) {
    if (info.machine !== 'step' || !info.name.startsWith(`${runId}-`)) continue;
    const match = /^(.*)-g(\d+)$/.exec(info.name.slice(runId.length + 1));
    if (!match) continue;
    const [, stepId = '', generation = '0'] = match;
    out[stepId] = [...(out[stepId] ?? []), Number(generation)].sort();
  }
  return out;
}
