/**
 * A person's say over a paused run's limits (RaiseBudget): a run held `budget_exhausted` or `max_replans` takes
 * larger limits and goes on where it paused, the raise is held to by every later decision (and revision), and every
 * raise that would not let it go on is refused with its code.
 */
import { describe, expect, it } from 'vitest';
import type { RunCommand } from '../../../../shared/engine/run/commands.ts';
import type { RunEvent } from '../../../../shared/engine/run/events.ts';
import { DrivenRun, initialState, planOf, typesOf } from '../../../support/decider.ts';

const boom = { code: 'E_X', message: 'boom', retryable: false };
const by = 'ana';

type Raise = Extract<RunCommand, { kind: 'RaiseBudget' }>['limits'];
const raise = (run: DrivenRun, limits: Raise): RunEvent[] => run.apply({ kind: 'RaiseBudget', limits, by });

/** Ends `id`'s attempt as succeeded, having spent `tokens`. */
function spend(run: DrivenRun, id: string, tokens: number): RunEvent[] {
  const step = run.step(id);
  return run.apply({
    kind: 'AttemptEnded',
    stepId: id,
    generation: step.generation,
    execution: run.execution(id),
    attempt: 1,
    outcome: { kind: 'succeeded', confidence: null },
    usage: { tokens, costUsd: 0 },
    note: 'done',
  });
}

/** a → b → c under a 100-token budget that pauses: a spends 150, so b never starts and the run is held. */
function exhaustedRun(): DrivenRun {
  const run = new DrivenRun();
  run.apply({
    kind: 'StartRun',
    plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }], {
      budget: { maxTokens: 100, maxCostUsd: 5, onExhausted: 'pause' },
    }),
  });
  spend(run, 'a', 150);
  return run;
}

describe('RaiseBudget on a run paused budget_exhausted', () => {
  it('records the raise and starts what the budget held back', () => {
    const run = exhaustedRun();
    expect(run.state.run.terminal).toMatchObject({ state: 'paused', reason: 'budget_exhausted' });
    expect(run.status('b')).toBe('pending');

    const events = raise(run, { maxTokens: 1000 });

    expect(typesOf(events)).toEqual(['BudgetRaised', 'RunReopened', 'StepStarted:b']);
    expect(events[0]).toMatchObject({
      limits: { maxTokens: 1000 },
      previous: { maxTokens: 100 },
      requestedBy: by,
    });
    expect(run.lastReply).toMatchObject({ ok: true, value: { status: 'running', limits: { maxTokens: 1000 } } });
    expect(run.state.run.raisedBudget).toEqual({ maxTokens: 1000 });
    expect(run.state.run.actions).toEqual([
      expect.objectContaining({ type: 'budget', requestedBy: by, detail: 'maxTokens 100 → 1000' }),
    ]);
  });

  it('answers the same raise by the same person again as the first (a redelivery), and raises nothing more', () => {
    const run = exhaustedRun();
    raise(run, { maxTokens: 1000 });
    expect(raise(run, { maxTokens: 1000 })).toEqual([]);
    expect(run.lastReply).toEqual({
      ok: true,
      value: { status: 'running', limits: { maxTokens: 1000, maxCostUsd: 5, maxReplans: 0 }, repeat: true },
    });
    expect(raise(run, { maxTokens: 2000 })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_NOT_HELD_FOR_LIMIT' });
    run.apply({ kind: 'RaiseBudget', limits: { maxTokens: 1000 }, by: 'bo' });
    expect(run.lastReply).toMatchObject({ ok: false, status: 409 });
  });

  it('holds the run to the raised limit afterwards: it completes under it, and pauses past it', () => {
    const run = exhaustedRun();
    raise(run, { maxTokens: 1000 });
    spend(run, 'b', 500);
    spend(run, 'c', 300);
    expect(run.state.run.status).toBe('complete');

    const over = exhaustedRun();
    raise(over, { maxTokens: 200 });
    spend(over, 'b', 100);
    expect(over.state.run.terminal).toMatchObject({ state: 'paused', reason: 'budget_exhausted' });
    expect(over.status('c')).toBe('pending');
  });

  it('runs again a step whose retry the budget refused, with what it blocked', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf(
        [
          { id: 'a', maxRetries: 2 },
          { id: 'b', dependsOn: ['a'] },
        ],
        {
          budget: { maxTokens: 100, onExhausted: 'pause' },
        },
      ),
    });
    run.apply({
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'failed', error: { ...boom, retryable: true } },
      usage: { tokens: 150, costUsd: 0 },
      note: 'failed',
    });
    expect(run.status('a')).toBe('failed');
    expect(run.status('b')).toBe('blocked');
    expect(run.state.run.terminal?.reason).toBe('budget_exhausted');

    const events = raise(run, { maxTokens: 400 });

    expect(typesOf(events)).toEqual(['BudgetRaised', 'RunReopened', 'StepMoved:a', 'StepMoved:b', 'StepStarted:a']);
    expect(run.step('a').generation).toBe(2);
    run.succeed('a');
    run.succeed('b');
    expect(run.state.run.status).toBe('complete');
  });
});

describe('RaiseBudget on a run paused max_replans', () => {
  const targets = () => ({ sideEffect: 'none' as const });

  function heldAtLimit(): DrivenRun {
    const run = new DrivenRun(initialState({ settings: { maxReplans: 1 }, targets }));
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]) });
    run.fail('a', boom);
    run.propose(
      [
        { id: 'a', target: 'tool:u' },
        { id: 'b', dependsOn: ['a'] },
      ],
      { failure: 'a' },
    );
    run.fail('a', { ...boom, message: 'another way' });
    return run;
  }

  it('asks the replanner again, and lets its next revision in', () => {
    const run = heldAtLimit();
    expect(run.state.run.terminal?.reason).toBe('max_replans');

    const events = raise(run, { maxReplans: 2 });

    expect(typesOf(events)).toEqual(['BudgetRaised', 'RunReopened', 'ReplanAsked']);
    expect(run.state.run.maxReplans).toBe(2);
    const revised = run.propose(
      [
        { id: 'a', target: 'tool:v' },
        { id: 'b', dependsOn: ['a'] },
      ],
      { failure: 'a' },
    );
    expect(typesOf(revised)).toContain('PlanRevised');
    expect(run.state.run.revision).toBe(3);
    run.succeed('a');
    run.succeed('b');
    expect(run.state.run.status).toBe('complete');
  });

  it('refuses a raise that leaves the replan limit where it is', () => {
    const run = heldAtLimit();
    expect(raise(run, {})).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_LIMIT_NOT_RAISED' });
    expect(raise(run, { maxReplans: 1 })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_LIMIT_NOT_RAISED' });
  });
});

describe('RaiseBudget refusals', () => {
  it('refuses a run that is not held for a limit, saying its state (409)', () => {
    const running = new DrivenRun();
    running.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }], { budget: { maxTokens: 100 } }) });
    expect(raise(running, { maxTokens: 200 })).toEqual([]);
    expect(running.lastReply).toMatchObject({
      ok: false,
      status: 409,
      code: 'E_NOT_HELD_FOR_LIMIT',
      details: { status: 'running' },
    });

    const paused = new DrivenRun();
    paused.apply({ kind: 'StartRun', plan: planOf([{ id: 'a', onFailure: 'pause' }], { budget: { maxTokens: 9 } }) });
    paused.fail('a', boom);
    expect(raise(paused, { maxTokens: 200 })).toEqual([]);
    expect(paused.lastReply).toMatchObject({
      status: 409,
      code: 'E_NOT_HELD_FOR_LIMIT',
      details: { status: 'paused', reason: 'failure_paused' },
    });
  });

  it('refuses a limit not larger than the run has, or one its budget does not have (422)', () => {
    const run = exhaustedRun();
    for (const limits of [{ maxTokens: 100 }, { maxTokens: -1 }, { maxSeconds: 60 }, {}] as Raise[]) {
      expect(raise(run, limits)).toEqual([]);
      expect(run.lastReply, JSON.stringify(limits)).toMatchObject({ status: 422, code: 'E_LIMIT_NOT_RAISED' });
    }
    // Replanning is off in these settings: there is no replan limit to raise.
    expect(raise(run, { maxTokens: 500, maxReplans: 3 })).toEqual([]);
    expect(run.lastReply).toMatchObject({ status: 422, code: 'E_LIMIT_NOT_RAISED', details: { limit: 'maxReplans' } });
    expect(run.state.run.status).toBe('paused');
  });

  it('refuses a raise that leaves the run over its budget (422), naming the limit still spent', () => {
    const run = exhaustedRun();
    expect(raise(run, { maxTokens: 120 })).toEqual([]);
    expect(run.lastReply).toMatchObject({
      status: 422,
      code: 'E_STILL_OVER_LIMIT',
      details: { exhausted: [{ dimension: 'tokens', limit: 120, spent: 150 }] },
    });
    expect(raise(run, { maxCostUsd: 10 })).toEqual([]);
    expect(run.lastReply).toMatchObject({ status: 422, code: 'E_STILL_OVER_LIMIT' });
    expect(run.state.run.status).toBe('paused');
  });
});
