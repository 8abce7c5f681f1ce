/**
 * The embedded Executions adapter on the REAL synthesized run and step definitions, with scripted handlers in place
 * of the Lambdas (test/integration/local-executions.test.ts): every handler call and every state a step execution
 * enters is logged, and each function key (the coordinator: each action) answers from a script.
 */
import { afterEach, beforeAll } from 'vitest';
import {
  createLocalExecutions,
  type LocalExecutionInfo,
  type LocalExecutions,
  type LocalHandler,
} from '../../infra/local/local-executions.ts';
import { type ExtractedMachines, synthesizeStateMachines } from '../../infra/local/synth.ts';

export type Payload = Record<string, unknown> & { action?: string; taskToken?: string };
export type Script = (payload: Payload) => unknown;

let machines: ExtractedMachines;
let executions: LocalExecutions | undefined;
/** Every handler call since the last boot, in order. */
export const calls: { fn: string; payload: Payload }[] = [];
/** What the executions reported through onError since the last boot. */
export const failures: { error: Error; execution: LocalExecutionInfo }[] = [];
/** The states step executions entered, in order (run-machine states are left out). */
export const stepStates: string[] = [];

/** Synthesizes the machines once for the calling test file, and closes each test's executions after it. */
export function useScriptedExecutions(): void {
  beforeAll(() => {
    machines = synthesizeStateMachines();
  });
  afterEach(() => {
    executions?.close();
    executions = undefined;
  });
}

/** Handlers that log every call and answer from a script per function key (coordinator: per action). */
export function boot(scripts: {
  Planner?: Script;
  Validator?: Script;
  StepExecutor?: Script;
  actions?: Record<string, Script>;
}) {
  calls.length = 0;
  failures.length = 0;
  stepStates.length = 0;
  const handler =
    (fn: string, script: (payload: Payload) => unknown): LocalHandler =>
    async (payload) => {
      calls.push({ fn, payload: payload as Payload });
      return script(payload as Payload);
    };
  const coordinatorDefaults: Record<string, Script> = {
    startRun: () => ({ deadlineSeconds: 300 }),
    awaitRun: () => ({}),
    recordFailure: (p) => ({ action: 'done', attempt: p.attempt ?? 1 }),
    requestApproval: () => ({ approvalId: 'ap-1' }),
    expireApproval: () => ({ outcome: 'failed' }),
  };
  const actions = { ...coordinatorDefaults, ...scripts.actions };
  executions = createLocalExecutions({
    definitions: { run: machines.run, step: machines.step },
    functionOf: machines.functionOf,
    backoffMs: 1,
    onStateEntered: (machine, state) => {
      if (machine === 'step') stepStates.push(state);
    },
    onError: (error, execution) => failures.push({ error, execution }),
    handlers: {
      Planner: handler('Planner', scripts.Planner ?? ((p) => ({ runId: p.runId }))),
      Validator: handler('Validator', scripts.Validator ?? (() => ({ valid: true, errors: [] }))),
      StepExecutor: handler('StepExecutor', scripts.StepExecutor ?? (() => ({ action: 'done', attempt: 1 }))),
      Coordinator: handler('Coordinator', (p) => (actions[p.action ?? ''] ?? (() => ({})))(p)),
    },
  });
  return executions;
}

export const trail = (): string[] => calls.map((c) => (c.fn === 'Coordinator' ? String(c.payload.action) : c.fn));
export const callOf = (action: string, nth = 0): Payload => {
  const found = calls.filter((c) => c.payload.action === action || c.fn === action)[nth];
  if (!found) throw new Error(`no call ${action} #${nth} in ${trail().join(' → ')}`);
  return found.payload;
};
export const statusOf = (ex: LocalExecutions, name: string): LocalExecutionInfo | undefined =>
  ex.list().find((info) => info.name === name);

export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
