/**
 * evolve: what each of the run's events does to its records. Deterministic and total: the same events applied to
 * the same state give the same state, which is how a run is rebuilt from its log and how the shell's copy and the
 * store's records stay one thing. `evolveInto` changes a draft in place (the decider's own copy while it decides);
 * `evolve` is the pure form.
 */
import type { StepError, StepStatus } from '../../plan/schema.ts';
import type { ApprovalRecord } from '../../ports/records/approvals.ts';
import type { RunRecord } from '../../ports/records/runs.ts';
import type { StepGenerationRecord, StepRecord, TraceEntry } from '../../ports/records/steps.ts';
import { appendAndRetain, traceEntry } from '../trace.ts';
import { actionOf, withAction } from './actions.ts';
import type { RunEvent } from './events.ts';
import { plannedRecord } from './planned.ts';
import { deriveReleases, generationOf, letsDependentsGo, recountOne } from './releases.ts';
import { countsOf, type DraftState, draftOf, type RunState } from './state.ts';
import { stepPartitionsFor } from './step-partitions.ts';

/** How many invalidation keys a run remembers (a repeat comes soon after: a client's retry, a redelivery). */
export const INVALIDATION_KEYS_KEPT = 100;

/** Applies one event to a copy of `state`. */
export function evolve(state: RunState, event: RunEvent): RunState {
  const draft = draftOf(state);
  evolveInto(draft, event);
  return draft;
}

/** The ended generation as a step's history keeps it (its output stays on its attempt records). */
function endedGeneration(step: StepRecord): StepGenerationRecord {
  return {
    generation: step.generation,
    status: step.status,
    ...(step.error === undefined ? {} : { error: step.error }),
    ...(step.confidence === undefined ? {} : { confidence: step.confidence }),
    ...(step.startedAt === undefined ? {} : { startedAt: step.startedAt }),
    ...(step.finishedAt === undefined ? {} : { finishedAt: step.finishedAt }),
    ...(step.claimedBy === undefined ? {} : { claimedBy: step.claimedBy }),
  };
}

export function evolveInto(draft: DraftState, event: RunEvent): void {
  const stepId = 'stepId' in event ? event.stepId : undefined;
  const before = stepId === undefined ? undefined : draft.steps.get(stepId)?.status;
  apply(draft, event);
  const done = actionOf(event);
  if (done !== undefined) draft.run = { ...draft.run, actions: withAction(draft.run.actions, done) };
  if (stepId === undefined) {
    if (event.type === 'RunStarted') recount(draft);
    return;
  }
  const after = draft.steps.get(stepId)?.status;
  if (before === after) return;
  if (before !== undefined && after !== undefined) recountDependents(draft, stepId, before, after);
  const was = before === undefined ? { open: 0, inFlight: 0 } : countsOf(before);
  const now = after === undefined ? { open: 0, inFlight: 0 } : countsOf(after);
  draft.open += now.open - was.open;
  draft.inFlight += now.inFlight - was.inFlight;
  if (before !== undefined) {
    const left = (draft.counts[before] ?? 0) - 1;
    if (left > 0) draft.counts[before] = left;
    else delete draft.counts[before];
  }
  if (after !== undefined) draft.counts[after] = (draft.counts[after] ?? 0) + 1;
}

/**
 * A step that starts or stops letting its dependents go changes what each unstarted dependent waits for: the
 * decider's copy of its record says so (`released`, `remaining`). It is not stamped as changed, so no batch writes it
 * for that alone: a join of 2,000 parents would otherwise be rewritten, growing, on each of their 2,000 releases.
 * What a pending step waits for follows from its upstream steps' statuses, and every reader derives it from them
 * (releases.ts); a copy loaded from the store therefore holds what this one does.
 */
function recountDependents(draft: DraftState, stepId: string, before: StepStatus, after: StepStatus): void {
  if (letsDependentsGo(draft, stepId, before) === letsDependentsGo(draft, stepId, after)) return;
  for (const id of draft.plan?.downstream(stepId) ?? []) recountOne(draft, id);
}

function recount(draft: DraftState): void {
  draft.open = 0;
  draft.inFlight = 0;
  draft.counts = {};
  for (const step of draft.steps.values()) {
    const counts = countsOf(step.status);
    draft.open += counts.open;
    draft.inFlight += counts.inFlight;
    draft.counts[step.status] = (draft.counts[step.status] ?? 0) + 1;
  }
}

function apply(draft: DraftState, event: RunEvent): void {
  const at = event.at;
  const touchRun = (patch: Partial<RunRecord>) => {
    draft.run = { ...draft.run, ...patch, updatedAt: at };
  };
  const step = (id: string): StepRecord => {
    const found = draft.steps.get(id);
    if (found === undefined) throw new Error(`evolve: ${event.type} names an unknown step ${id}`);
    return found;
  };
  const retention = draft.settings.traceRetention;
  /** Replaces a step record; `trace` is appended under the retention of its new status. */
  const setStep = (id: string, patch: Partial<StepRecord>, trace: readonly TraceEntry[] = []) => {
    const current = step(id);
    const status = patch.status ?? current.status;
    const next: StepRecord = {
      ...current,
      ...patch,
      trace: trace.length === 0 ? current.trace : appendAndRetain(current.trace, trace, status, retention),
      updatedAt: at,
    };
    draft.steps.set(id, next);
  };
  const approval = (id: string): ApprovalRecord => {
    const found = draft.approvals.get(id);
    if (found === undefined) throw new Error(`evolve: ${event.type} names an unknown approval ${id}`);
    return found;
  };
  const fail = (text: string): TraceEntry[] => [traceEntry('fail', text, at)];
  const closing = (error: StepError) => ({ error, finishedAt: at });

  switch (event.type) {
    case 'RunAdmitted':
      touchRun({ status: 'planning' });
      return;
    case 'RunStarted': {
      const { submittedPlan: _s, candidatePlan: _c, planStamp: _p, ...run } = draft.run;
      const view = draft.viewOf(event.plan);
      // Chosen once: the store keys a run's step items by it from the first one on.
      const shards = run.stepShards ?? stepPartitionsFor(view.executable.length);
      draft.run = {
        ...run,
        status: 'running',
        revision: event.plan.revision,
        startedAt: at,
        updatedAt: at,
        ...(shards > 1 ? { stepShards: shards } : {}),
      };
      draft.plan = view;
      for (const id of view.executable) draft.steps.set(id, plannedRecord(view, draft.run.runId, id, at));
      return;
    }
    case 'WaiterSet':
      touchRun({ waiterToken: event.token });
      return;
    case 'StepStarted':
      setStep(event.stepId, { status: 'running', claimedBy: event.execution, startedAt: at, attempts: 1 }, [
        traceEntry('exec', `started by ${event.execution}`, at),
      ]);
      return;
    case 'StepSkipped':
      setStep(event.stepId, { status: 'skipped', finishedAt: at }, [
        traceEntry('judge', `skipped: ${event.reason}`, at),
      ]);
      return;
    case 'StepSucceeded':
      setStep(
        event.stepId,
        { status: 'succeeded', attempts: event.attempts, confidence: event.confidence, error: null, finishedAt: at },
        event.trace,
      );
      return;
    case 'StepRetrying':
      setStep(event.stepId, { status: 'retrying', attempts: event.attempt, error: event.error }, event.trace);
      return;
    case 'StepFailed':
      setStep(event.stepId, { status: 'failed', attempts: event.attempts, ...closing(event.error) }, event.trace);
      return;
    case 'StepBlocked':
      setStep(event.stepId, { status: 'blocked', ...closing(event.error) }, fail(event.error.message));
      return;
    case 'StepClosed':
      setStep(event.stepId, { status: 'cancelled', ...closing(event.error) }, fail(event.error.message));
      return;
    case 'StepSuperseded':
      setStep(event.stepId, { status: 'superseded', ...closing(event.error) }, fail(event.error.message));
      return;
    case 'StepEvidence':
      setStep(event.stepId, { attempts: Math.max(step(event.stepId).attempts, event.attempts) }, event.trace);
      return;
    case 'StepAwaiting':
      setStep(event.stepId, { status: 'awaiting_approval', attempts: event.attempts }, [
        traceEntry('judge', `waiting for a decision on ${event.approvalId}`, at),
      ]);
      return;
    case 'StepMoved': {
      const before = step(event.stepId);
      const { claimedBy: _c, output: _o, error: _e, confidence: _f, startedAt: _s, finishedAt: _d, ...kept } = before;
      const { compensation: _comp, generationKey: _k, staleReleases: _r, ...rest } = kept;
      draft.steps.set(event.stepId, {
        ...rest,
        ...generationOf(draft, event.stepId),
        generation: event.generation,
        attempts: 0,
        history: [...(before.history ?? []), endedGeneration(before)],
        trace:
          event.trace.length === 0 ? before.trace : appendAndRetain(before.trace, event.trace, 'pending', retention),
        updatedAt: at,
      });
      return;
    }
    case 'StepAdded':
      draft.steps.set(event.stepId, firstRecord(draft, event.stepId, at, event.trace));
      return;
    case 'ApprovalRequested':
    case 'RevisionHeld': {
      // An approval is its run's tenant's: whose inbox lists it, who may read it.
      const { tenant } = draft.run;
      draft.approvals.set(
        event.approval.approvalId,
        tenant === undefined ? event.approval : { ...event.approval, tenant },
      );
      return;
    }
    case 'ApprovalTokenMoved':
      draft.approvals.set(event.approvalId, { ...approval(event.approvalId), taskToken: event.token });
      return;
    case 'WaitAnswered':
      return;
    case 'DecisionRedelivered':
      setStep(
        event.stepId,
        {
          status: 'running',
          claimedBy: event.execution,
          attempts: Math.max(step(event.stepId).attempts, event.attempt),
        },
        [
          traceEntry(
            'judge',
            `the decision on ${event.approvalId} is judged by ${event.execution}: its wait timed out before it was answered`,
            at,
          ),
        ],
      );
      return;
    case 'ApprovalDecided':
      draft.approvals.set(event.approvalId, {
        ...approval(event.approvalId),
        status: event.status,
        decidedAt: at,
        decidedBy: event.by,
        ...(event.comment === undefined ? {} : { comment: event.comment }),
        ...(event.output === undefined ? {} : { output: event.output }),
      });
      return;
    case 'ApprovalClosed':
      draft.approvals.set(event.approvalId, {
        ...approval(event.approvalId),
        status: 'expired',
        decidedAt: at,
        comment: event.comment,
      });
      return;
    case 'UsageCounted': {
      const s = step(event.stepId);
      setStep(event.stepId, {
        usageTokens: (s.usageTokens ?? 0) + event.tokens,
        usageCostUsd: (s.usageCostUsd ?? 0) + event.costUsd,
      });
      touchRun({
        usageTokens: (draft.run.usageTokens ?? 0) + event.tokens,
        usageCostUsd: (draft.run.usageCostUsd ?? 0) + event.costUsd,
      });
      return;
    }
    case 'BudgetWarned':
      touchRun({
        budgetWarned: [...(draft.run.budgetWarned ?? []), `${event.stepId ?? 'run'}#${event.dimension}`],
      });
      return;
    case 'BudgetExhausted':
      touchRun({ budgetExhaustedFor: [...(draft.run.budgetExhaustedFor ?? []), event.revision] });
      return;
    case 'BudgetRaised': {
      const { maxReplans, ...limits } = event.limits;
      const raised = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
      touchRun({
        ...(Object.keys(raised).length === 0 ? {} : { raisedBudget: { ...draft.run.raisedBudget, ...raised } }),
        ...(maxReplans === undefined ? {} : { maxReplans }),
      });
      return;
    }
    case 'CancelBegun':
      touchRun({
        cancelling: true,
        cancelCompensation: true,
        ...(event.by === null ? {} : { cancelRequestedBy: event.by }),
      });
      return;
    case 'CompensationStarted': {
      const s = step(event.stepId);
      setStep(event.stepId, {
        status: 'compensating',
        compensation: {
          target: event.target,
          attempts: 0,
          idempotencyKey: `${draft.run.runId}#${event.stepId}#${event.generation}#compensate`,
          startedAt: at,
          ...(event.round === 0 ? {} : { round: event.round }),
          ...(event.by === undefined ? {} : { retriedBy: event.by }),
          ...(s.compensation?.input === undefined ? {} : { input: s.compensation.input }),
        },
      });
      return;
    }
    case 'CompensationRetrying': {
      const base = compensationOf(step(event.stepId), at);
      setStep(
        event.stepId,
        { compensation: { ...base, attempts: Math.max(base.attempts, event.attempt), error: event.error } },
        event.trace,
      );
      return;
    }
    case 'CompensationEnded': {
      const base = compensationOf(step(event.stepId), at);
      setStep(
        event.stepId,
        {
          status: event.state,
          compensation: {
            ...base,
            finishedAt: at,
            error: event.error ?? null,
            ...(event.attempts === undefined ? {} : { attempts: Math.max(base.attempts, event.attempts) }),
            ...(event.input === undefined ? {} : { input: event.input }),
            ...(event.output === undefined ? {} : { output: event.output }),
            ...(event.resolution === undefined ? {} : { resolution: { ...event.resolution, at } }),
          },
        },
        event.trace,
      );
      return;
    }
    case 'RunFinished':
      touchRun({ status: event.terminal.state, terminal: event.terminal, endCounts: { ...draft.counts } });
      return;
    case 'RunReopened': {
      const { terminal, waiterToken: _w, cancelling: _c, endCounts: _e, ...run } = draft.run;
      draft.run = {
        ...run,
        status: 'running',
        reopened: event.opening,
        previousTerminals: [...(run.previousTerminals ?? []), ...(terminal === undefined ? [] : [terminal])],
        updatedAt: at,
      };
      return;
    }
    case 'ReplanAsked': {
      // Asked again (after a held revision was decided) the failure stays one member.
      const asked = draft.run.handledFailures ?? [];
      touchRun({ handledFailures: asked.includes(event.failure) ? asked : [...asked, event.failure] });
      return;
    }
    case 'ReplanDeclined': {
      const { failure, stepId, code, message } = event;
      touchRun({
        replanDeclines: [...(draft.run.replanDeclines ?? []), JSON.stringify({ failure, stepId, code, message })],
      });
      return;
    }
    case 'PlanRevised':
      touchRun({
        revision: event.plan.revision,
        replans: draft.run.replans + 1,
        replanLog: [...(draft.run.replanLog ?? []), event.record],
        ...(event.fingerprint === undefined
          ? {}
          : { replanFingerprints: [...(draft.run.replanFingerprints ?? []), event.fingerprint] }),
        ...(event.objective === undefined ? {} : { objective: event.objective }),
      });
      draft.plan = draft.viewOf(event.plan);
      // A revision may change what lets a step go (its upstream, an upstream's onFailure) without an event of it.
      deriveReleases(draft);
      return;
    case 'InvalidationApplied':
      touchRun({ invalidationKeys: [...(draft.run.invalidationKeys ?? []), event.key].slice(-INVALIDATION_KEYS_KEPT) });
      return;
    case 'StartsDeferred':
    case 'StartsRetried':
      // A deferred start changes no fact: its step stays running, held by its execution, which has not begun yet.
      // The log keeps the deferral (and the timer its effect set) so a shell that loads the run knows it.
      return;
  }
}

/** A step's compensation record, or an empty one for a compensation that left none. */
function compensationOf(step: StepRecord, at: string): NonNullable<StepRecord['compensation']> {
  return step.compensation ?? { target: '', attempts: 0, idempotencyKey: '', startedAt: at };
}

function firstRecord(draft: DraftState, stepId: string, at: string, trace: readonly TraceEntry[]): StepRecord {
  return {
    runId: draft.run.runId,
    stepId,
    generation: 1,
    ...generationOf(draft, stepId),
    attempts: 0,
    trace: [...trace],
    updatedAt: at,
  };
}
