/**
 * In-memory fakes of the ports the API uses, with the same conditional semantics as the DynamoDB store
 * (createRun refuses an existing id, claimRunKey keeps the first owner, decideApproval only decides a pending one).
 * Every method yields once, so concurrent requests really interleave.
 */
import { ConflictError } from '../../../shared/errors.ts';
import type { Plan, RunStatus } from '../../../shared/plan/schema.ts';
import type { Executions, MachineName, StartResult } from '../../../shared/ports/executions.ts';
import type {
  ApprovalRecord,
  AttemptRecord,
  IdempotencyRecord,
  NewRunEvent,
  RunEventRecord,
  RunKeyClaim,
  RunRecord,
  RunRemovableField,
  StepPatch,
  StepRecord,
  Store,
} from '../../../shared/ports/store.ts';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const copy = <T>(value: T): T => structuredClone(value);

export class FakeStore implements Store {
  readonly runs = new Map<string, RunRecord>();
  readonly runKeys = new Map<string, RunKeyClaim>();
  readonly plans = new Map<string, { plan: Plan; reason: string; createdAt: string }>();
  readonly steps = new Map<string, StepRecord>();
  readonly events: RunEventRecord[] = [];
  readonly approvals = new Map<string, ApprovalRecord>();
  readonly attempts: AttemptRecord[] = [];
  readonly idempotency = new Map<string, IdempotencyRecord>();

  async createRun(run: RunRecord): Promise<void> {
    await tick();
    if (this.runs.has(run.runId)) throw new ConflictError(`run ${run.runId} exists`);
    this.runs.set(run.runId, copy(run));
  }
  async claimRunKey(key: string, runId: string, requestHash: string): Promise<RunKeyClaim> {
    await tick();
    const owner = this.runKeys.get(key);
    if (owner !== undefined) return owner;
    this.runKeys.set(key, { runId, requestHash });
    return { runId, requestHash };
  }
  async getRun(runId: string): Promise<RunRecord | undefined> {
    await tick();
    const run = this.runs.get(runId);
    return run && copy(run);
  }
  async updateRun(
    runId: string,
    from: readonly RunStatus[],
    patch: Partial<Omit<RunRecord, 'runId' | 'createdAt'>>,
    options: { readonly remove?: readonly RunRemovableField[] } = {},
  ): Promise<RunRecord | undefined> {
    await tick();
    const run = this.runs.get(runId);
    if (!run || !from.includes(run.status)) return undefined;
    const kept = Object.fromEntries(
      Object.entries(run).filter(([field]) => !(options.remove ?? []).includes(field as RunRemovableField)),
    ) as unknown as RunRecord;
    const next = { ...kept, ...copy(patch) };
    this.runs.set(runId, next);
    return copy(next);
  }
  async markRunOnce(runId: string, attribute: 'replanFingerprints' | 'handledFailures', member: string) {
    await tick();
    const run = this.runs.get(runId);
    if (!run || (run[attribute] ?? []).includes(member)) return false;
    this.runs.set(runId, { ...run, [attribute]: [...(run[attribute] ?? []), member] });
    return true;
  }
  async startGeneration(): Promise<StepRecord | undefined> {
    return undefined;
  }
  async putWatches(): Promise<void> {}
  async listWatchers(): Promise<{ runId: string; stepId: string }[]> {
    return [];
  }
  async listRuns(options: { status?: RunStatus; limit?: number } = {}): Promise<RunRecord[]> {
    await tick();
    return [...this.runs.values()]
      .filter((r) => options.status === undefined || r.status === options.status)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.runId.localeCompare(a.runId))
      .slice(0, options.limit ?? 100)
      .map(copy);
  }
  async putPlanRevision(runId: string, plan: Plan, reason: string): Promise<void> {
    await tick();
    const key = `${runId}#${plan.revision}`;
    if (this.plans.has(key)) throw new ConflictError(`revision ${plan.revision} exists`);
    this.plans.set(key, { plan: copy(plan), reason, createdAt: new Date(0).toISOString() });
  }
  async getPlanRevision(runId: string, revision?: number) {
    await tick();
    const wanted = revision ?? Math.max(0, ...(await this.listPlanRevisions(runId)).map((r) => r.revision));
    const stored = this.plans.get(`${runId}#${wanted}`);
    return stored && copy(stored);
  }
  async listPlanRevisions(runId: string) {
    await tick();
    return [...this.plans.entries()]
      .filter(([key]) => key.startsWith(`${runId}#`))
      .map(([, v]) => ({ revision: v.plan.revision, reason: v.reason, createdAt: v.createdAt }))
      .sort((a, b) => a.revision - b.revision);
  }
  async putSteps(steps: readonly StepRecord[]): Promise<void> {
    await tick();
    for (const step of steps) {
      const key = `${step.runId}#${step.stepId}`;
      if (!this.steps.has(key)) this.steps.set(key, copy(step));
    }
  }
  async getStep(runId: string, stepId: string): Promise<StepRecord | undefined> {
    await tick();
    const step = this.steps.get(`${runId}#${stepId}`);
    return step && copy(step);
  }
  async listSteps(runId: string): Promise<StepRecord[]> {
    await tick();
    return [...this.steps.values()].filter((s) => s.runId === runId).map(copy);
  }
  async transitionStep(
    runId: string,
    stepId: string,
    condition: { generation: number; from: readonly StepRecord['status'][]; unclaimed?: boolean },
    patch: StepPatch,
  ): Promise<StepRecord | undefined> {
    await tick();
    const key = `${runId}#${stepId}`;
    const step = this.steps.get(key);
    if (!step || step.generation !== condition.generation || !condition.from.includes(step.status)) return undefined;
    const { appendTrace, ...rest } = patch;
    const next: StepRecord = { ...step, ...copy(rest), trace: [...(rest.trace ?? step.trace), ...(appendTrace ?? [])] };
    this.steps.set(key, next);
    return copy(next);
  }
  async getSteps(runId: string, stepIds: readonly string[]): Promise<StepRecord[]> {
    await tick();
    return stepIds.flatMap((id) => {
      const step = this.steps.get(`${runId}#${id}`);
      return step ? [copy(step)] : [];
    });
  }
  async getStepWithRun(
    runId: string,
    stepId: string,
    _attempt?: unknown,
    others?: readonly string[],
  ): Promise<{ run?: RunRecord; step?: StepRecord; others?: StepRecord[] }> {
    const [run, step] = await Promise.all([this.getRun(runId), this.getStep(runId, stepId)]);
    const found = others === undefined ? undefined : await this.getSteps(runId, others);
    return { ...(run ? { run } : {}), ...(step ? { step } : {}), ...(found ? { others: found } : {}) };
  }
  async releaseDependency(): Promise<StepRecord | undefined> {
    throw new Error('not used by the API');
  }
  async releaseLastDependency(): Promise<StepRecord | undefined> {
    throw new Error('not used by the API');
  }
  async recordSettled(): Promise<number> {
    throw new Error('not used by the API');
  }
  async getAttempt(): Promise<AttemptRecord | undefined> {
    throw new Error('not used by the API');
  }
  async putAttempt(attempt: AttemptRecord): Promise<boolean> {
    this.attempts.push(copy(attempt));
    return true;
  }
  async updateAttempt(): Promise<void> {}
  async listAttempts(): Promise<AttemptRecord[]> {
    return [];
  }
  async appendEvents(events: readonly NewRunEvent[]): Promise<RunEventRecord[]> {
    await tick();
    const stored = events.map((e, i) => ({ ...copy(e), seq: String(this.events.length + i + 1).padStart(8, '0') }));
    this.events.push(...stored);
    return stored.map(copy);
  }
  async listEvents(runId: string, options: { after?: string } = {}): Promise<RunEventRecord[]> {
    await tick();
    const after = options.after;
    return this.events.filter((e) => e.runId === runId && (after === undefined || e.seq > after)).map(copy);
  }
  async putApproval(approval: ApprovalRecord): Promise<boolean> {
    await tick();
    if (this.approvals.has(approval.approvalId)) return false;
    this.approvals.set(approval.approvalId, copy(approval));
    return true;
  }
  async getApproval(approvalId: string): Promise<ApprovalRecord | undefined> {
    await tick();
    const approval = this.approvals.get(approvalId);
    return approval && copy(approval);
  }
  async decideApproval(
    approvalId: string,
    decision: Pick<ApprovalRecord, 'status' | 'decidedAt' | 'decidedBy' | 'comment' | 'output'>,
  ): Promise<ApprovalRecord | undefined> {
    await tick();
    const approval = this.approvals.get(approvalId);
    if (approval?.status !== 'pending') return undefined;
    const next = { ...approval, ...copy(decision) };
    this.approvals.set(approvalId, next);
    return copy(next);
  }
  async listApprovals(options: { status?: ApprovalRecord['status']; runId?: string } = {}): Promise<ApprovalRecord[]> {
    await tick();
    return [...this.approvals.values()]
      .filter(
        (a) =>
          (options.status === undefined || a.status === options.status) &&
          (!options.runId || a.runId === options.runId),
      )
      .map(copy);
  }
  async beginIdempotent(): Promise<IdempotencyRecord | undefined> {
    return undefined;
  }
  async completeIdempotent(): Promise<void> {}
  async abortIdempotent(): Promise<void> {}
}

export interface StartCall {
  readonly machine: MachineName;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly started: boolean;
}

/** Executions that remember what was started (a duplicate name starts nothing) and what tokens were answered. */
export class FakeExecutions implements Executions {
  readonly starts: StartCall[] = [];
  readonly successes: { token: string; output: unknown }[] = [];
  readonly failures: { token: string; error: string; cause: string }[] = [];
  /** Set to make sendTaskSuccess throw (e.g. an error named TaskTimedOut). */
  sendError: Error | undefined;

  startedNames(): string[] {
    return this.starts.filter((s) => s.started).map((s) => s.name);
  }
  async start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult> {
    await tick();
    const started = !this.starts.some((s) => s.name === name);
    this.starts.push({ machine, name, input, started });
    return { executionId: `arn:exec:${name}`, started };
  }
  async sendTaskSuccess(token: string, output: unknown): Promise<void> {
    await tick();
    if (this.sendError) throw this.sendError;
    this.successes.push({ token, output });
  }
  async sendTaskFailure(token: string, error: string, cause: string): Promise<void> {
    this.failures.push({ token, error, cause });
  }
  async stop(): Promise<void> {}
}
