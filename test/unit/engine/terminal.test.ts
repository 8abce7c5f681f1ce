import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideTerminal, describeTerminal, type TerminalStepView } from '../../../shared/engine/terminal.ts';
import { STEP_STATUSES, type StepStatus } from '../../../shared/plan/schema.ts';

const view = (entries: [string, StepStatus, string?][]) => ({
  expected: entries.map(([id]) => id),
  steps: new Map<string, TerminalStepView>(
    entries.map(([id, status, code]) => [
      id,
      { status, ...(code === undefined ? {} : { error: { code, message: code } }) },
    ]),
  ),
});

const statusArbitrary = fc.constantFrom(...STEP_STATUSES);
const runArbitrary = fc
  .array(statusArbitrary, { maxLength: 12 })
  .map((statuses) => view(statuses.map((s, i) => [`s${i}`, s] as [string, StepStatus])));

describe('decideTerminal', () => {
  it('completes when every step succeeded or was skipped and one succeeded', () => {
    const decision = decideTerminal(
      view([
        ['a', 'succeeded'],
        ['b', 'skipped'],
      ]),
    );
    expect(decision).toMatchObject({ state: 'complete', reason: 'completed' });
  });

  it('never completes vacuously', () => {
    expect(decideTerminal(view([]))).toMatchObject({ state: 'failed', reason: 'nothing_succeeded' });
    expect(
      decideTerminal(
        view([
          ['a', 'skipped'],
          ['b', 'skipped'],
        ]),
      ),
    ).toMatchObject({
      state: 'failed',
      reason: 'nothing_succeeded',
    });
  });

  it('never completes with an expected step that has no record', () => {
    const input = view([['a', 'succeeded']]);
    const decision = decideTerminal({ ...input, expected: ['a', 'ghost'] });
    expect(decision).toMatchObject({ state: 'failed', reason: 'incomplete' });
    if (decision.state !== 'continue') expect(decision.evidence.unknown).toEqual(['ghost']);
  });

  it('continues while work is open, even after a failure elsewhere', () => {
    expect(
      decideTerminal(
        view([
          ['a', 'failed'],
          ['b', 'running'],
        ]),
      ),
    ).toEqual({ state: 'continue' });
    expect(
      decideTerminal(
        view([
          ['a', 'succeeded'],
          ['b', 'pending'],
        ]),
      ),
    ).toEqual({ state: 'continue' });
  });

  it('fails naming the failed steps, not the blocked ones, as root causes', () => {
    const decision = decideTerminal(
      view([
        ['a', 'succeeded'],
        ['b', 'failed', 'E_BOOM'],
        ['c', 'blocked', 'E_BLOCKED'],
        ['d', 'succeeded'],
      ]),
    );
    expect(decision).toMatchObject({ state: 'failed', reason: 'step_failed' });
    if (decision.state !== 'continue') {
      expect(decision.evidence.rootCauses).toEqual(['b']);
      expect(decision.evidence.errors.b?.code).toBe('E_BOOM');
      expect(decision.evidence.counts).toMatchObject({ succeeded: 2, failed: 1, blocked: 1 });
    }
  });

  it('puts cancellation first', () => {
    expect(decideTerminal({ ...view([['a', 'succeeded']]), cancelled: true })).toMatchObject({ state: 'cancelled' });
  });

  it('puts verified completion before the deadline', () => {
    expect(decideTerminal({ ...view([['a', 'succeeded']]), timedOut: true })).toMatchObject({ state: 'complete' });
  });

  it('puts a denied approval before the deadline', () => {
    const decision = decideTerminal({
      ...view([
        ['a', 'failed', 'E_REJECTED'],
        ['b', 'running'],
      ]),
      timedOut: true,
    });
    expect(decision).toMatchObject({ state: 'failed', reason: 'approval_denied' });
  });

  it('fails at the deadline while steps still run', () => {
    const decision = decideTerminal({
      ...view([
        ['a', 'succeeded'],
        ['b', 'running'],
      ]),
      timedOut: true,
    });
    expect(decision).toMatchObject({ state: 'failed', reason: 'deadline' });
    if (decision.state !== 'continue') expect(decision.evidence.open).toEqual(['b']);
  });

  it('leaves the run paused at the deadline when only people are left to answer', () => {
    const decision = decideTerminal({
      ...view([
        ['a', 'succeeded'],
        ['b', 'awaiting_approval'],
        ['c', 'pending'],
      ]),
      timedOut: true,
    });
    expect(decision).toMatchObject({ state: 'paused', reason: 'deadline' });
  });

  it('puts the deadline before retry exhaustion and budget', () => {
    const decision = decideTerminal({
      ...view([
        ['a', 'failed', 'E_X'],
        ['b', 'running'],
      ]),
      timedOut: true,
      budgetExhausted: 'cost',
    });
    expect(decision).toMatchObject({ reason: 'deadline' });
  });

  it('stops on an exhausted budget even with open work', () => {
    expect(decideTerminal({ ...view([['a', 'running']]), budgetExhausted: 'replans' })).toMatchObject({
      state: 'failed',
      reason: 'budget_exhausted',
    });
  });

  it('ignores superseded steps', () => {
    expect(
      decideTerminal(
        view([
          ['a', 'superseded'],
          ['b', 'succeeded'],
        ]),
      ),
    ).toMatchObject({ state: 'complete' });
  });

  it('never says complete unless every expected step succeeded or was skipped and one succeeded', () => {
    fc.assert(
      fc.property(runArbitrary, fc.boolean(), (input, timedOut) => {
        const decision = decideTerminal({ ...input, timedOut });
        const live = input.expected.map((id) => input.steps.get(id)?.status).filter((s) => s !== 'superseded');
        const allGood = live.every((s) => s === 'succeeded' || s === 'skipped');
        const anySucceeded = live.includes('succeeded');
        expect(decision.state === 'complete').toBe(allGood && anySucceeded);
      }),
    );
  });

  it('never continues once nothing is open, and names every failed step as a root cause', () => {
    fc.assert(
      fc.property(runArbitrary, (input) => {
        const decision = decideTerminal(input);
        const statuses = [...input.steps.values()].map((s) => s.status);
        const open = statuses.some((s) => ['pending', 'ready', 'running', 'retrying', 'awaiting_approval'].includes(s));
        expect(decision.state === 'continue').toBe(
          open && !statuses.every((s) => s === 'succeeded' || s === 'skipped' || s === 'superseded'),
        );
        if (decision.state === 'failed') {
          const failed = input.expected.filter((id) => input.steps.get(id)?.status === 'failed');
          expect(decision.evidence.rootCauses).toEqual(failed);
        }
      }),
    );
  });
});

describe('describeTerminal', () => {
  it('names the root cause of a failure', () => {
    expect(
      describeTerminal(
        decideTerminal(
          view([
            ['a', 'failed'],
            ['b', 'blocked'],
          ]),
        ),
      ),
    ).toContain('root cause a');
  });
});
