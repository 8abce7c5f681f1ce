import { describe, expect, it } from 'vitest';
import type { RunSettings } from '../../../../shared/engine/run/state.ts';
import type { Budget } from '../../../../shared/plan/schema.ts';
import { DrivenRun, initialState, planOf, typesOf } from '../../../support/decider.ts';

const targets = (target: string) => ({
  sideEffect: target === 'tool:write' ? ('mutating' as const) : ('none' as const),
});
const BUDGET: Budget = { maxTokens: 100, onExhausted: 'replan' };
const RAISED: Budget = { maxTokens: 300, onExhausted: 'replan' };

/** An attempt of `id` that spent `tokens` and succeeded, or failed with a retryable error. */
function spend(run: DrivenRun, id: string, tokens: number, ok: boolean) {
  const step = run.step(id);
  return run.apply({
    kind: 'AttemptEnded',
    stepId: id,
    generation: step.generation,
    execution: run.execution(id),
    attempt: 1,
    outcome: ok ? { kind: 'succeeded', confidence: null } : { kind: 'failed', error: { code: 'E_X', message: 'x' } },
    usage: { tokens, costUsd: 0 },
    note: 'spent',
  });
}

/** a and b run side by side; a spends the whole budget, b's retry is then not made: the run waits for a replan. */
function exhaustedRun(settings: Partial<RunSettings> = {}, budget: Budget = BUDGET): DrivenRun {
  const run = new DrivenRun(initialState({ settings: { maxReplans: 3, ...settings }, targets }));
  run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b' }], { budget }) });
  expect(typesOf(spend(run, 'a', 150, true))).toEqual(['UsageCounted:a', 'BudgetWarned', 'StepSucceeded:a']);
  return run;
}

function waitingRun(settings: Partial<RunSettings> = {}, budget: Budget = BUDGET): DrivenRun {
  const run = exhaustedRun(settings, budget);
  expect(typesOf(spend(run, 'b', 0, false))).toEqual(['StepFailed:b', 'ReplanAsked', 'BudgetExhausted']);
  expect(run.step('b').error).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { scope: 'run' } });
  expect(run.state.run).toMatchObject({ status: 'running', budgetExhaustedFor: [1] });
  return run;
}

const cheaper = (budget: Budget = RAISED, target = 'tool:cheap') =>
  [[{ id: 'a' }, { id: 'b', target }], { trigger: 'budget' as const, fields: { budget } }] as const;

describe('a budget replan', () => {
  it('is made current with the raised budget, and runs again what the budget stopped', () => {
    const run = waitingRun();
    const events = run.propose(...cheaper());
    expect(typesOf(events)).toEqual(['PlanRevised', 'StepMoved:b', 'StepStarted:b']);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 2 } });
    expect(run.state.run.replanLog?.[0]).toMatchObject({ failure: '~budget', code: 'E_BUDGET_EXHAUSTED', stepId: '' });
    expect(run.state.plan?.plan.budget).toEqual(RAISED);
    // b's own failure, asked about before, is gone with its generation.
    expect(run.propose([{ id: 'a' }, { id: 'b', title: 'B' }], { failure: 'b' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ value: { outcome: 'ignored', why: 'stale' } });
    expect(typesOf(spend(run, 'b', 10, true))).toEqual(['UsageCounted:b', 'StepSucceeded:b', 'RunFinished']);
    expect(run.state.run.terminal?.state).toBe('complete');
  });

  it('is not asked for again: a second exhaustion ends the run', () => {
    const run = waitingRun();
    run.propose(...cheaper());
    const events = spend(run, 'b', 200, false);
    expect(typesOf(events)).toEqual([
      'UsageCounted:b',
      'StepFailed:b',
      'ReplanAsked',
      'BudgetExhausted',
      'RunFinished',
    ]);
    expect(run.state.run.terminal).toMatchObject({
      state: 'failed',
      reason: 'budget_exhausted',
      evidence: { budgetReplan: { revision: 2, outcome: 'exhausted_again' } },
    });
    expect(run.propose(...cheaper({ maxTokens: 900, onExhausted: 'replan' }))).toEqual([]);
    expect(run.lastReply).toMatchObject({ value: { outcome: 'ignored', why: 'run_ended' } });
  });

  it('ends the run budget_exhausted once declined', () => {
    const run = waitingRun();
    const events = run.apply({ kind: 'DeclineReplan', failure: '~budget', code: 'E_NO_CHANGE', message: 'same' });
    expect(typesOf(events)).toEqual(['ReplanDeclined:', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({
      state: 'failed',
      reason: 'budget_exhausted',
      evidence: { budgetReplan: { outcome: 'declined', code: 'E_NO_CHANGE' } },
    });
  });

  it('is declined at once with no replan left', () => {
    const run = exhaustedRun({ maxReplans: 0 });
    expect(typesOf(spend(run, 'b', 0, false))).toEqual(['StepFailed:b', 'BudgetExhausted', 'RunFinished']);
    expect(run.state.run.terminal?.evidence).toMatchObject({
      budgetReplan: { outcome: 'declined', code: 'E_REPLAN_LIMIT' },
    });
  });

  it('is ignored while the budget is not spent', () => {
    const run = new DrivenRun(initialState({ settings: { maxReplans: 3 }, targets }));
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b' }], { budget: BUDGET }) });
    expect(run.propose(...cheaper())).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'ignored', why: 'stale' } });
  });

  it('held for a person waits its full window, and rejected or expired ends the run budget_exhausted', () => {
    const budget: Budget = { ...BUDGET, maxSeconds: 1000 };
    const rejected = waitingRun({}, budget);
    expect(typesOf(rejected.propose(...cheaper({ ...RAISED, maxSeconds: 2000 }, 'tool:write')))).toEqual([
      'RevisionHeld',
    ]);
    const approval = [...rejected.state.approvals.values()][0];
    // Asked for once the budget is spent: the run's seconds left do not shorten its window (3600 s).
    expect(Date.parse(approval?.deadline ?? '') - Date.parse(approval?.createdAt ?? '')).toBe(3_600_000);
    const approvalId = approval?.approvalId ?? '';
    const events = rejected.apply({ kind: 'DecideApproval', approvalId, decision: 'reject', by: 'ana' });
    expect(typesOf(events)).toEqual(['ApprovalDecided', 'ReplanDeclined:', 'RunFinished']);
    expect(rejected.state.run.terminal?.evidence).toMatchObject({
      budgetReplan: { outcome: 'rejected', code: 'E_REVISION_REJECTED' },
    });

    const expired = waitingRun({}, budget);
    expired.propose(...cheaper({ ...RAISED, maxSeconds: 2000 }, 'tool:write'));
    const expiry = expired.apply({ kind: 'RevisionWaitExpired', approvalId });
    expect(typesOf(expiry)).toEqual(['ApprovalClosed', 'ReplanDeclined:', 'RunFinished']);
    expect(expired.state.run.terminal?.evidence).toMatchObject({
      budgetReplan: { outcome: 'expired', code: 'E_APPROVAL_EXPIRED' },
    });
  });

  it('is declined while another revision waits for a person', () => {
    const run = waitingRun();
    expect(typesOf(run.propose([{ id: 'a' }, { id: 'b' }, { id: 'w', target: 'tool:write' }]))).toEqual([
      'RevisionHeld',
    ]);
    const events = run.propose(...cheaper());
    expect(typesOf(events)).toEqual(['ReplanDeclined:', 'RunFinished']);
    expect(run.lastReply).toMatchObject({ value: { outcome: 'declined', code: 'E_REVISION_PENDING' } });
    expect(run.state.run.terminal?.evidence).toMatchObject({
      budgetReplan: { outcome: 'declined', code: 'E_REVISION_PENDING' },
    });
  });
});
