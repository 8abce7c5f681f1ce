/**
 * Boot on a data directory that holds unfinished work: the executions the journal recovered carry on from the state
 * they were in (a Wait waits the rest, a callback waits again on the token the world holds), and the mailbox journal
 * posts again the commands not yet decided (boot.ts). One gap is left: the run's decider commits a batch first and
 * performs its effects after it (services/runs/shell.ts), and only whoever loads the run next performs the effects of
 * a batch that did not finish, which after a crash between the two may be nobody for a long time. So every step of a
 * running run that the decider started (claimed by its execution's deterministic name, still in flight) gets that
 * execution started again, by the same name: a no-op for those the journal brought back, and the start the crash
 * lost otherwise. A step the decider has not started is left to it.
 */
import { DEFAULT_TENANT } from '../../shared/config/defaults.ts';
import { stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';
import type { Store } from '../../shared/ports/store.ts';
import type { LocalExecutions, ResumedExecution } from './local-executions.ts';

/** Step statuses whose step has an execution moving it (the one the decider started). */
const MOVING = new Set(['running', 'retrying', 'awaiting_approval']);

export interface ResumeReport {
  /** Executions carried on from the journal. */
  readonly executions: readonly ResumedExecution[];
  /** Step executions started by the sweep of the store (none the journal already had). */
  readonly started: readonly { readonly runId: string; readonly stepId: string; readonly generation: number }[];
}

export async function resumeOpenWork(
  executions: LocalExecutions,
  store: Store,
  tenants: readonly string[] = [DEFAULT_TENANT],
): Promise<ResumeReport> {
  const resumed = executions.resume();
  const started: { runId: string; stepId: string; generation: number }[] = [];
  const running = await Promise.all(
    tenants.map((tenant) => store.listRuns({ tenant, status: 'running', limit: 10_000 })),
  );
  for (const run of running.flat()) {
    for (const step of await store.listSteps(run.runId)) {
      const ref = { runId: run.runId, stepId: step.stepId, generation: step.generation };
      const name = stepExecutionName(ref.runId, ref.stepId, ref.generation);
      if (!MOVING.has(step.status) || step.claimedBy !== name) continue;
      const result = await executions.start('step', name, stepExecutionInput(ref));
      if (result.started) started.push(ref);
    }
  }
  return { executions: resumed, started };
}

/** The progress lines that say what boot carried on. */
export function describeResumed(report: ResumeReport): string[] {
  const { executions, started } = report;
  if (executions.length === 0 && started.length === 0) return [];
  const runs = executions.filter((e) => e.machine === 'run').length;
  const steps = executions.filter((e) => e.machine === 'step');
  const lines = [
    `resumed ${runs} run execution(s) and ${steps.length + started.length} step execution(s) from the data directory`,
  ];
  for (const e of steps) {
    const left = e.remainingMs === undefined ? '' : ` (${(e.remainingMs / 1000).toFixed(1)} s left)`;
    const where =
      e.kind === 'wait'
        ? `waits out its backoff${left}`
        : e.kind === 'token'
          ? `waits for a decision again${left}`
          : `carries on at ${e.state ?? 'its start'}`;
    lines.push(`  ${e.name}: ${where}`);
  }
  for (const s of started) lines.push(`  ${s.runId} ${s.stepId} g${s.generation}: started again (open in the store)`);
  return lines;
}
