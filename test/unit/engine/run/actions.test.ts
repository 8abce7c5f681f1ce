/**
 * Who did what to a run: a person's cancel, replan, invalidation, action on a compensation and raise of its limits
 * carry who asked into the event that records it, the run keeps the last 100 of them (`actions`), and what is
 * published of them names who asked too.
 */
import { describe, expect, it } from 'vitest';
import { RUN_ACTIONS_KEPT } from '../../../../shared/engine/run/actions.ts';
import type { RunCommand } from '../../../../shared/engine/run/commands.ts';
import { decide } from '../../../../shared/engine/run/decide.ts';
import type { TargetFacts } from '../../../../shared/engine/run/state.ts';
import type { DomainEvent } from '../../../../shared/ports/events.ts';
import { DrivenRun, initialState, planOf, revisionOf } from '../../../support/decider.ts';

const substituted = [{ id: 'a', target: 'tool:u' }];
const boom = { code: 'E_X', message: 'boom', retryable: false };
const targets = (target: string): TargetFacts | undefined =>
  target === 'tool:pay' ? { sideEffect: 'mutating', compensateTarget: 'tool:refund' } : { sideEffect: 'none' };

type Command = Extract<RunCommand, unknown> extends infer C ? (C extends unknown ? Omit<C, 'at'> : never) : never;

/** Decides `command` on the run as it is (the run moves on), and returns what was published. */
function published(run: DrivenRun, command: Command): DomainEvent[] {
  run.advance(1);
  const decided = decide(run.state, { ...command, at: run.now() } as RunCommand);
  run.state = decided.state;
  run.events.push(...decided.events);
  return [...decided.published];
}

const detailOf = (events: readonly DomainEvent[], type: string) =>
  events.find((e) => e.detailType === type)?.detail as Record<string, unknown> | undefined;

function started(
  steps: Parameters<typeof planOf>[0] = [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }],
  settings = {},
): DrivenRun {
  const run = new DrivenRun(initialState({ settings, targets }));
  run.apply({ kind: 'StartRun', plan: planOf(steps) });
  return run;
}

describe('the actions a run records', () => {
  it('records a cancel with who asked, and publishes it on RunFinished', () => {
    const run = started();
    const out = published(run, { kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(run.state.run.actions).toEqual([{ type: 'cancel', requestedBy: 'ana', at: run.now() }]);
    expect(detailOf(out, 'RunFinished')).toMatchObject({ state: 'cancelled', requestedBy: 'ana' });
  });

  it('records a cancel with compensation once, when it begins, and names who asked when the run ends', () => {
    const run = started([
      { id: 'pay', target: 'tool:pay', segment: 's' },
      { id: 'b', segment: 's', dependsOn: ['pay'] },
    ]);
    run.succeed('pay');
    published(run, { kind: 'CancelRun', compensate: true, by: 'ana' });
    expect(run.state.run.actions?.map((a) => [a.type, a.requestedBy])).toEqual([['cancel', 'ana']]);
    const out = published(run, {
      kind: 'CompensationEnded',
      stepId: 'pay',
      generation: 1,
      execution: run.compensationExecution('pay'),
      round: 0,
      attempt: 1,
      outcome: { kind: 'compensated' },
    });
    expect(detailOf(out, 'RunFinished')).toMatchObject({ state: 'cancelled', requestedBy: 'ana' });
    expect(run.state.run.actions).toHaveLength(1);
  });

  it("records a person's invalidation and a webhook's, with the step it named", () => {
    const run = started();
    run.succeed('a');
    const out = published(run, { kind: 'Invalidate', roots: ['a'], reason: 'stale', key: 'k1', by: 'bo' });
    expect(detailOf(out, 'StepsInvalidated')).toMatchObject({ requestedBy: 'bo' });
    run.succeed('a');
    published(run, {
      kind: 'Invalidate',
      roots: ['a'],
      reason: 'resource changed: db',
      key: 'k2',
      resourceChange: { changedAt: new Date(Date.parse(run.now()) + 1500).toISOString() },
      by: 'webhook:crm',
    });
    expect(run.state.run.actions?.map((a) => [a.type, a.requestedBy, a.stepId])).toEqual([
      ['invalidate', 'bo', 'a'],
      ['invalidate', 'webhook:crm', 'a'],
    ]);
  });

  it("records a person's replan when its revision is made, and publishes who asked", () => {
    const run = started([{ id: 'a' }], { maxReplans: 2 });
    run.fail('a', boom);
    const out = published(run, {
      ...revisionOf(run.state, substituted, { trigger: 'request', failure: 'a' }),
      by: 'cy',
    });
    expect(detailOf(out, 'PlanRevised')).toMatchObject({ revision: 2, requestedBy: 'cy' });
    expect(run.state.run.actions).toEqual([expect.objectContaining({ type: 'replan', requestedBy: 'cy' })]);
    expect(run.state.run.replanLog?.[0]).toMatchObject({ requestedBy: 'cy' });
  });

  it("records nothing for the replanner's own revision", () => {
    const run = started([{ id: 'a' }], { maxReplans: 2 });
    run.fail('a', boom);
    published(run, revisionOf(run.state, substituted, { failure: 'a' }));
    expect(run.state.run.revision).toBe(2);
    expect(run.state.run.actions).toBeUndefined();
  });

  it("records a person's retry and resolution of a failed compensation", () => {
    const run = started([
      { id: 'pay', target: 'tool:pay', segment: 's' },
      { id: 'c', segment: 's', dependsOn: ['pay'] },
    ]);
    run.succeed('pay');
    run.fail('c', boom);
    run.compensate('pay', { kind: 'failed', error: boom });
    published(run, { kind: 'ActOnCompensation', stepId: 'pay', action: { kind: 'retry' }, by: 'di' });
    run.compensate('pay', { kind: 'failed', error: boom });
    const out = published(run, {
      kind: 'ActOnCompensation',
      stepId: 'pay',
      action: { kind: 'resolve', note: 'refunded by hand' },
      by: 'ed',
    });
    expect(detailOf(out, 'StepCompensation')).toMatchObject({ state: 'compensated', by: 'ed' });
    expect(run.state.run.actions?.map((a) => [a.type, a.requestedBy, a.detail])).toEqual([
      ['compensation', 'di', 'retry'],
      ['compensation', 'ed', 'resolved by hand: refunded by hand'],
    ]);
  });

  it(`keeps only the last ${RUN_ACTIONS_KEPT} actions`, () => {
    const run = started();
    run.succeed('a');
    for (let i = 0; i < RUN_ACTIONS_KEPT + 5; i++)
      published(run, { kind: 'Invalidate', roots: ['b'], reason: `r${i}`, key: `k${i}`, by: `p${i}` });
    const actions = run.state.run.actions ?? [];
    expect(actions).toHaveLength(RUN_ACTIONS_KEPT);
    expect(actions[0]?.requestedBy).toBe('p5');
    expect(actions.at(-1)?.requestedBy).toBe(`p${RUN_ACTIONS_KEPT + 4}`);
  });
});
