/**
 * The run decider driven in tests: a run's initial state, plans built from a few fields, and commands applied one
 * after the other, each at its own instant, with the events and answers kept.
 */

import { budgetScope } from '../../shared/engine/budget-replan.ts';
import { addedMutatingTargets } from '../../shared/engine/replan/authority.ts';
import { type ReplanScope, replanScope, requestScope } from '../../shared/engine/replan/scope.ts';
import type {
  ProposeRevision,
  RevisionTrigger,
  RunCommand,
  RunCommandInput,
} from '../../shared/engine/run/commands.ts';
import { decide } from '../../shared/engine/run/decide.ts';
import type { Reply } from '../../shared/engine/run/decision.ts';
import type { RunEvent } from '../../shared/engine/run/events.ts';
import { evolve } from '../../shared/engine/run/evolve.ts';
import { planView, type RunSettings, type RunState, type TargetFacts } from '../../shared/engine/run/state.ts';
import type { Plan, PlanStep } from '../../shared/plan/schema.ts';
import type { Executions } from '../../shared/ports/executions.ts';
import type { HeldRevision } from '../../shared/ports/records/approvals.ts';
import type { RunRecord } from '../../shared/ports/store.ts';

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

  /** Events that happened by other means than the commands under test (a gate's wait, say): evolved in, not decided. */
  given(...events: RunEvent[]): void {
    for (const event of events) this.state = evolve(this.state, event);
  }

  /** Proposes `steps` as the next revision (see revisionOf) and returns the events it caused. */
  propose(steps: readonly PlanStepFields[], options: RevisionOptions = {}): RunEvent[] {
    return this.apply(revisionOf(this.state, steps, options));
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

type PlanStepFields = Partial<PlanStep> & { id: string };

export interface RevisionOptions {
  /** Default: `failure` when `failure` is given, else `request`. */
  readonly trigger?: RevisionTrigger;
  /** The failed step the revision answers (its current generation). */
  readonly failure?: string;
  /** Plan fields of the revision (its budget, objective, rationale). */
  readonly fields?: Partial<Plan>;
  /** A person's new objective. */
  readonly objective?: string;
  /** Default: what the targets' facts say the revision adds that mutates. */
  readonly mutatingTargets?: readonly string[];
  readonly scope?: ReplanScope;
  /** Default: the run's current revision. */
  readonly baseRevision?: number;
  readonly reason?: string;
  /** A person's replan: the request it answers (its planning job). */
  readonly request?: string;
}

/**
 * A ProposeRevision of `steps` as the replanner would send it against the run's current revision: the scope of its
 * trigger (the failure and its downstream, the whole plan for a person, what the budget stopped), the mutating
 * targets it adds as the run's target facts say.
 */
export function revisionOf(
  state: RunState,
  steps: readonly PlanStepFields[],
  options: RevisionOptions = {},
): Omit<ProposeRevision, 'at'> {
  const current = state.plan;
  if (current === undefined) throw new Error('revisionOf: the run has no plan yet');
  const trigger = options.trigger ?? (options.failure === undefined ? 'request' : 'failure');
  const base = options.baseRevision ?? state.run.revision;
  const failed = options.failure === undefined ? undefined : state.steps.get(options.failure);
  const objective = options.objective ?? current.plan.objective;
  const { steps: _previous, ...fields } = current.plan;
  const plan: Plan = { ...planOf(steps, { ...fields, ...options.fields, objective }), revision: base + 1 };
  const scope =
    options.scope ??
    (trigger === 'budget'
      ? budgetScope(current.plan, state.steps)
      : trigger === 'request'
        ? requestScope(current.plan, options.failure === undefined ? [] : [options.failure], options.objective)
        : replanScope(current.plan, options.failure === undefined ? [] : [options.failure]));
  const revision: HeldRevision = {
    baseRevision: base,
    plan,
    scope,
    change: { kind: 'rewrite' },
    replaces: {},
    reason: options.reason ?? `${trigger} revision`,
    ...(failed === undefined ? {} : { failure: { stepId: failed.stepId, generation: failed.generation } }),
    ...(failed?.error?.code === undefined ? {} : { failedCode: failed.error.code }),
    ...(options.objective === undefined ? {} : { objective: options.objective }),
    ...(trigger === 'budget' ? { trigger: 'budget' as const } : {}),
    ...(options.request === undefined ? {} : { request: options.request }),
  };
  const mutatingTargets =
    options.mutatingTargets ?? addedMutatingTargets(current.plan, plan, (t) => current.target(t)?.sideEffect);
  return { kind: 'ProposeRevision', trigger, revision, mutatingTargets };
}

/** Executions that start and stop nothing: a shell's effects on the state machines, when a test looks elsewhere. */
export const IDLE_EXECUTIONS: Executions = {
  start: async (_machine, name) => ({ executionId: name, started: true }),
  sendTaskSuccess: async () => {},
  sendTaskFailure: async () => {},
  stop: async () => {},
  stopNamed: async () => {},
};

/** A shell's dependencies but its store and run log: no timer, no pacing (no start handed back), tool targets. */
export const QUIET_SHELL = {
  executions: IDLE_EXECUTIONS,
  timers: { schedule: async () => {} },
  mailbox: { send: async () => {} },
  settings: SETTINGS,
  targets: () => ({ sideEffect: 'none' as const }),
};

/** The first attempt of generation 1 of a step, ended succeeded, as its execution reports it. */
export const attemptSucceeded = (stepId: string, execution: string): RunCommandInput => ({
  kind: 'AttemptEnded',
  stepId,
  generation: 1,
  execution,
  attempt: 1,
  outcome: { kind: 'succeeded', confidence: null },
  note: 'done',
});

/** A run as POST /runs stores it before its plan: what a shell's StartRun starts from. */
export const planningRun = (runId: string, at: string): RunRecord => ({
  runId,
  status: 'planning',
  objective: 'o',
  revision: 0,
  createdAt: at,
  updatedAt: at,
  replans: 0,
});
