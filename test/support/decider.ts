/**
 * The run decider driven in tests: a run's initial state, plans built from a few fields, and commands applied one
 * after the other, each at its own instant, with the events and answers kept.
 */
import type { RunCommand } from '../../shared/engine/run/commands.ts';
import { decide } from '../../shared/engine/run/decide.ts';
import type { Reply } from '../../shared/engine/run/decision.ts';
import type { RunEvent } from '../../shared/engine/run/events.ts';
import { planView, type RunSettings, type RunState, type TargetFacts } from '../../shared/engine/run/state.ts';
import type { Plan, PlanStep } from '../../shared/plan/schema.ts';

export const SETTINGS: RunSettings = {
  maxReplans: 0,
  runDeadlineSeconds: 3600,
  replanWatchSeconds: 20,
  retry: { baseSeconds: 1, capSeconds: 60 },
  traceRetention: 'full',
};

export function planOf(steps: readonly (Partial<PlanStep> & { id: string })[], fields: Partial<Plan> = {}): Plan {
  return {
    schemaVersion: 1,
    revision: 1,
    objective: 'test',
    steps: steps.map((s) => ({ title: s.id, target: 'tool:t', dependsOn: [], ...s })),
    ...fields,
  } as Plan;
}

export function initialState(
  options: { settings?: Partial<RunSettings>; targets?: (target: string) => TargetFacts | undefined } = {},
): RunState {
  const targets = options.targets ?? (() => ({ sideEffect: 'none' as const }));
  return {
    version: 0,
    run: {
      runId: 'run-1',
      status: 'planning',
      objective: 'test',
      revision: 0,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      replans: 0,
    },
    steps: new Map(),
    approvals: new Map(),
    settings: { ...SETTINGS, ...options.settings },
    viewOf: (plan) => planView(plan, targets),
  };
}

/** A run driven command by command; each command is taken one second after the one before. */
export class DrivenRun {
  state: RunState;
  readonly events: RunEvent[] = [];
  lastReply: Reply = { ok: true };
  private clock = Date.parse('2026-01-01T00:00:01.000Z');

  constructor(state: RunState = initialState()) {
    this.state = state;
  }

  now(): string {
    return new Date(this.clock).toISOString();
  }

  /** Lets time pass before the next command (which comes one second after that). */
  advance(seconds: number): void {
    this.clock += seconds * 1000;
  }

  /** Applies a command (its `at` filled in) and returns the events it caused. */
  apply(command: DistributiveOmit<RunCommand, 'at'>): RunEvent[] {
    this.clock += 1000;
    const decided = decide(this.state, { ...command, at: this.now() } as RunCommand);
    this.state = decided.state;
    this.events.push(...decided.events);
    this.lastReply = decided.reply;
    return [...decided.events];
  }

  step(id: string) {
    const found = this.state.steps.get(id);
    if (!found) throw new Error(`no step ${id}`);
    return found;
  }

  status(id: string) {
    return this.step(id).status;
  }

  /** The execution the decider started for a step's current generation. */
  execution(id: string): string {
    const step = this.step(id);
    if (step.claimedBy === undefined) throw new Error(`step ${id} was not started`);
    return step.claimedBy;
  }

  succeed(id: string, attempt = 1): RunEvent[] {
    const step = this.step(id);
    return this.apply({
      kind: 'AttemptEnded',
      stepId: id,
      generation: step.generation,
      execution: this.execution(id),
      attempt,
      outcome: { kind: 'succeeded', confidence: null },
      note: `attempt ${attempt} answered`,
    });
  }

  fail(id: string, error: { code: string; message: string; retryable?: boolean }, attempt = 1): RunEvent[] {
    const step = this.step(id);
    return this.apply({
      kind: 'AttemptEnded',
      stepId: id,
      generation: step.generation,
      execution: this.execution(id),
      attempt,
      outcome: { kind: 'failed', error },
      note: `attempt ${attempt} failed: ${error.code}`,
    });
  }

  /** The step's execution waits on `token` for a person (a gate: attempt 1; a review: the attempt that answered). */
  await(
    id: string,
    options: { kind?: 'approval' | 'review'; token?: string; timeoutSeconds?: number; attempt?: number } = {},
  ): RunEvent[] {
    const step = this.step(id);
    return this.apply({
      kind: 'AwaitDecision',
      stepId: id,
      generation: step.generation,
      execution: this.execution(id),
      approvalKind: options.kind ?? 'approval',
      attempt: options.attempt ?? Math.max(1, step.attempts),
      token: options.token ?? `token-${id}`,
      timeoutSeconds: options.timeoutSeconds ?? 600,
      presentation: { question: `Approve ${id}?`, input: { of: id } },
    });
  }

  /** A person decides an approval (the API's command). */
  decide(
    approvalId: string,
    decision: 'approve' | 'reject' | 'edit',
    by = 'ana',
    extra: { output?: unknown; comment?: string } = {},
  ): RunEvent[] {
    return this.apply({ kind: 'DecideApproval', approvalId, decision, by, ...extra });
  }

  /** The machine's wait for a decision on the step timed out. */
  timeOut(id: string, kind: 'approval' | 'review' = 'approval'): RunEvent[] {
    const step = this.step(id);
    return this.apply({
      kind: 'DecisionTimedOut',
      stepId: id,
      generation: step.generation,
      execution: this.execution(id),
      approvalKind: kind,
    });
  }

  /** The approvals of a step, oldest first. */
  approvals(stepId: string) {
    return [...this.state.approvals.values()]
      .filter((a) => a.stepId === stepId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
  }

  /** The execution the decider started for the compensation of a step (its current round). */
  compensationExecution(id: string): string {
    const started = this.events.filter(
      (e): e is Extract<RunEvent, { type: 'CompensationStarted' }> =>
        e.type === 'CompensationStarted' && e.stepId === id,
    );
    const last = started.at(-1);
    if (last === undefined) throw new Error(`no compensation of ${id} was started`);
    return last.execution;
  }

  /** The compensation of a step ends (its current round; attempt 1 unless said). */
  compensate(id: string, outcome: CompensationOutcome, attempt = 1): RunEvent[] {
    const step = this.step(id);
    return this.apply({
      kind: 'CompensationEnded',
      stepId: id,
      generation: step.generation,
      execution: this.compensationExecution(id),
      round: step.compensation?.round ?? 0,
      attempt,
      outcome,
    });
  }
}

type CompensationOutcome = Extract<RunCommand, { kind: 'CompensationEnded' }>['outcome'];

type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

export const typesOf = (events: readonly RunEvent[]): string[] =>
  events.map((e) => ('stepId' in e ? `${e.type}:${e.stepId}` : e.type));
