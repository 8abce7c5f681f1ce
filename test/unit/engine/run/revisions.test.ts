import { describe, expect, it } from 'vitest';
import {
  REMOVED_APPROVAL_COMMENT,
  REVISED_APPROVAL_COMMENT,
} from '../../../../shared/engine/run/rules/approval-closing.ts';
import { replanRefusal } from '../../../../shared/engine/run/rules/revision-proposals.ts';
import type { RunSettings } from '../../../../shared/engine/run/state.ts';
import type { ApprovalRecord } from '../../../../shared/ports/records/approvals.ts';
import { DrivenRun, initialState, planOf, revisionOf, typesOf } from '../../../support/decider.ts';

const boom = { code: 'E_X', message: 'boom', retryable: false };
const targets = (target: string) => ({
  sideEffect: target === 'tool:write' ? ('mutating' as const) : ('none' as const),
});
const replanning = (settings: Partial<RunSettings> = {}) =>
  new DrivenRun(initialState({ settings: { maxReplans: 3, ...settings }, targets }));

/** a → b, with a failed for good and its failure asked about. */
function failedRun(): DrivenRun {
  const run = replanning();
  run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]) });
  expect(typesOf(run.fail('a', boom))).toEqual(['StepFailed:a', 'StepBlocked:b', 'ReplanAsked']);
  return run;
}

const substituted = [
  { id: 'a', target: 'tool:u' },
  { id: 'b', dependsOn: ['a'] },
];

describe("a failure's revision", () => {
  it('is made current: the failed step and what it blocked start their next generation, the ready one starts', () => {
    const run = failedRun();
    const events = run.propose(substituted, { failure: 'a' });
    expect(typesOf(events)).toEqual(['PlanRevised', 'StepMoved:a', 'StepMoved:b', 'StepStarted:a']);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 2 } });
    expect(run.state.run).toMatchObject({ revision: 2, replans: 1, status: 'running' });
    expect(run.state.run.replanLog?.[0]).toMatchObject({ revision: 2, stepId: 'a', code: 'E_X', failure: 'a#1' });
    expect(run.state.run.replanFingerprints).toHaveLength(1);
    expect(run.step('a')).toMatchObject({ generation: 2, status: 'running', attempts: 1 });
    expect(run.step('a').history?.[0]).toMatchObject({ generation: 1, status: 'failed' });
    expect(run.step('a').trace.some((t) => t.kind === 'plan' && t.text.includes('tool:u (revision 2)'))).toBe(true);
    expect(run.step('b')).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
    run.succeed('a');
    expect(typesOf(run.succeed('b'))).toEqual(['StepSucceeded:b', 'RunFinished']);
    expect(run.state.run.terminal?.state).toBe('complete');
  });

  it('answers a repeat of the proposal it made as the first time (the answer was lost), changing nothing', () => {
    const run = failedRun();
    const proposal = revisionOf(run.state, substituted, { failure: 'a' });
    run.apply(proposal);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 2 } });
    expect(run.apply(proposal)).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 2 } });
    expect(run.state.run).toMatchObject({ revision: 2, replans: 1 });
    // Another answer to the same failure is not the same proposal: the failure is gone (its step moved on).
    const other = revisionOf(run.state, [{ id: 'a', target: 'tool:w' }, substituted[1] ?? { id: 'b' }], {
      failure: 'a',
      baseRevision: 1,
    });
    expect(run.apply(other)).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'ignored', why: 'stale' } });
  });

  it('is refused when it is not revision n+1 of its base, and is stale against another base revision', () => {
    const run = failedRun();
    const answer = revisionOf(run.state, substituted, { failure: 'a' });
    const skipping = { ...answer.revision, plan: { ...answer.revision.plan, revision: 3 } };
    expect(run.apply({ ...answer, revision: skipping })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_INVALID_REVISION' });
    expect(run.apply({ ...answer, trigger: 'budget' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_INVALID_REVISION' });
    expect(run.propose(substituted, { failure: 'a', baseRevision: 0 })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_STALE' });
    run.propose(
      [
        { id: 'a', target: 'tool:u' },
        { id: 'b', target: 'tool:v', dependsOn: ['a'] },
      ],
      { failure: 'a' },
    );
    expect(typesOf(run.fail('a', { ...boom, message: 'another way' }))).toEqual([
      'StepFailed:a',
      'StepBlocked:b',
      'ReplanAsked',
    ]);
    // The failure of a's second generation is answered against revision 1: the run has moved on.
    const late = run.propose(substituted, { failure: 'a', baseRevision: 1 });
    expect(late).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_STALE' });
    expect(run.state.run).toMatchObject({ revision: 2, status: 'running', handledFailures: ['a#1', 'a#2'] });
  });

  it('is ignored once the failure is gone, answered or declined, or with replanning off', () => {
    const run = failedRun();
    const answer = revisionOf(run.state, substituted, { failure: 'a' });
    run.apply(answer);
    // The same answer again: a#1 is no longer failed (a is in its second generation).
    expect(
      run.apply({
        ...answer,
        revision: { ...answer.revision, baseRevision: 2, plan: { ...answer.revision.plan, revision: 3 } },
      }),
    ).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'ignored', why: 'stale' } });

    const declined = failedRun();
    declined.apply({ kind: 'DeclineReplan', failure: 'a#1', code: 'E_NO_ALTERNATIVE', message: 'none' });
    expect(declined.propose(substituted, { failure: 'a' })).toEqual([]);
    expect(declined.lastReply).toEqual({ ok: true, value: { outcome: 'ignored', why: 'duplicate' } });

    const off = new DrivenRun(initialState({ targets }));
    off.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }]) });
    expect(typesOf(off.fail('a', boom))).toEqual(['StepFailed:a', 'RunFinished']);
    expect(off.propose([{ id: 'a', target: 'tool:u' }], { failure: 'a' })).toEqual([]);
    expect(off.lastReply).toEqual({ ok: true, value: { outcome: 'ignored', why: 'disabled' } });
  });

  it('is refused for a cancelled run, and for one being cancelled with compensation', () => {
    const run = failedRun();
    run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(run.propose(substituted, { failure: 'a' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_RUN_CANCELLED' });

    const writes = new DrivenRun(
      initialState({
        settings: { maxReplans: 3 },
        targets: (t) => ({ sideEffect: t === 'tool:w' ? 'mutating' : 'none', compensateTarget: 'tool:undo' }),
      }),
    );
    writes.apply({ kind: 'StartRun', plan: planOf([{ id: 'w', target: 'tool:w', segment: 's' }, { id: 'a' }]) });
    writes.succeed('w');
    writes.fail('a', boom);
    expect(typesOf(writes.apply({ kind: 'CancelRun', compensate: true, by: 'ana' }))).toEqual([
      'CancelBegun',
      'CompensationStarted:w',
    ]);
    expect(
      writes.propose(
        [
          { id: 'w', target: 'tool:w', segment: 's' },
          { id: 'a', target: 'tool:u' },
        ],
        { failure: 'a' },
      ),
    ).toEqual([]);
    expect(writes.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_RUN_CANCELLED' });
  });

  it('declines a failure the run can no longer take a revision for: it stands', () => {
    const run = failedRun();
    run.apply({ kind: 'FinalizeRun', opening: 0, timedOut: true });
    expect(run.state.run.status).toBe('failed');
    expect(typesOf(run.propose(substituted, { failure: 'a' }))).toEqual(['ReplanDeclined:a']);
    expect(run.lastReply).toMatchObject({ ok: true, value: { outcome: 'declined', code: 'E_RUN_NOT_RUNNING' } });

    const paused = replanning();
    paused.apply({ kind: 'StartRun', plan: planOf([{ id: 'a', onFailure: 'pause' }]) });
    expect(typesOf(paused.fail('a', boom))).toEqual(['StepFailed:a', 'RunFinished']);
    expect(typesOf(paused.propose([{ id: 'a', target: 'tool:u' }], { failure: 'a' }))).toEqual(['ReplanDeclined:a']);
    expect(paused.lastReply).toMatchObject({ value: { outcome: 'declined', code: 'E_FAILURE_POLICY' } });
  });
});

describe("a person's replan", () => {
  it('is refused as the API refuses it', () => {
    const planning = replanning();
    expect(replanRefusal(planning.state)).toMatchObject({ status: 409, code: 'E_NOT_REPLANNABLE' });
    const run = failedRun();
    expect(replanRefusal(run.state)).toBeUndefined();
    const limited = new DrivenRun(initialState({ settings: { maxReplans: 0 } }));
    limited.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }]) });
    expect(replanRefusal(limited.state)).toMatchObject({ status: 409, code: 'E_REPLAN_LIMIT' });
    run.propose([
      { id: 'a', target: 'tool:write' },
      { id: 'b', dependsOn: ['a'] },
    ]);
    expect(replanRefusal(run.state)).toMatchObject({
      status: 409,
      code: 'E_REVISION_PENDING',
      details: { approvalId: 'run-1.revision.r2.1' },
    });
    run.apply({ kind: 'CancelRun', compensate: false, by: null });
    expect(replanRefusal(run.state)).toMatchObject({ status: 409, code: 'E_RUN_CANCELLED' });
  });

  it('is made once of two alike requests: the other is stale, a repeat of the first is answered as the first', () => {
    const run = replanning();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }]) });
    run.succeed('a');
    const alike = (request: string) =>
      revisionOf(run.state, [{ id: 'a' }, { id: 'c', dependsOn: ['a'] }], { reason: 'more', request });
    const first = alike('job-1');
    const second = alike('job-2');
    expect(typesOf(run.apply(first))).toEqual(['RunReopened', 'PlanRevised', 'StepAdded:c', 'StepStarted:c']);
    expect(run.state.run.replanLog?.[0]).toMatchObject({ revision: 2, request: 'job-1' });
    // The second request's planner read revision 1 and proposed the same: it is not the first's repeat.
    expect(run.apply(second)).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_STALE' });
    // The first request again (its job run once more): answered as it was, nothing changes.
    expect(run.apply(first)).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 2 } });
    expect(run.state.run).toMatchObject({ revision: 2, replans: 1 });
  });

  it('held for a person, is held once of two alike requests; a repeat of the first is told the same approval', () => {
    const run = failedRun();
    const steps = [
      { id: 'a', target: 'tool:write' },
      { id: 'b', dependsOn: ['a'] },
    ];
    const first = revisionOf(run.state, steps, { request: 'job-1' });
    const second = revisionOf(run.state, steps, { request: 'job-2' });
    run.apply(first);
    const held = { ok: true, value: { outcome: 'awaiting_approval', approvalId: 'run-1.revision.r2.1' } };
    expect(run.lastReply).toEqual(held);
    expect(run.apply(second)).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_PENDING' });
    expect(run.apply(first)).toEqual([]);
    expect(run.lastReply).toEqual(held);
  });

  it('reopens a finished run and runs what it adds', () => {
    const run = replanning();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }]) });
    expect(typesOf(run.succeed('a'))).toEqual(['StepSucceeded:a', 'RunFinished']);
    const events = run.propose([{ id: 'a' }, { id: 'c', dependsOn: ['a'] }], { objective: 'more' });
    expect(typesOf(events)).toEqual(['RunReopened', 'PlanRevised', 'StepAdded:c', 'StepStarted:c']);
    expect(run.state.run).toMatchObject({ status: 'running', reopened: 1, objective: 'more', revision: 2 });
    expect(run.state.run.replanLog?.[0]).toMatchObject({ code: 'E_REQUESTED', stepId: '' });
    expect(run.state.run.replanLog?.[0]?.failure).toBeUndefined();
    expect(run.state.run.replanFingerprints ?? []).toEqual([]);
    expect(run.status('a')).toBe('succeeded');
    expect(typesOf(run.succeed('c'))).toEqual(['StepSucceeded:c', 'RunFinished']);
    expect(run.state.run.previousTerminals).toHaveLength(1);
  });

  it("moves a changed step's dependents with it, each waiting for the new generation upstream", () => {
    const run = replanning();
    // Listed dependents first: the moves still go upstream first.
    const plan = [{ id: 'c', dependsOn: ['b'] }, { id: 'b', dependsOn: ['a'] }, { id: 'a' }];
    run.apply({ kind: 'StartRun', plan: planOf(plan) });
    run.succeed('a');
    run.succeed('b');
    run.succeed('c');
    expect(run.state.run.status).toBe('complete');
    const events = run.propose([
      { id: 'c', dependsOn: ['b'] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'a', title: 'A' },
    ]);
    expect(typesOf(events)).toEqual([
      'RunReopened',
      'PlanRevised',
      'StepMoved:a',
      'StepMoved:b',
      'StepMoved:c',
      'StepStarted:a',
    ]);
    expect(run.step('b')).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
    expect(run.step('c')).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
  });

  it("supersedes a removed step and closes its pending approval; a changed step's approval closes as revised", () => {
    const run = replanning();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'g' }, { id: 'h' }, { id: 'k', dependsOn: ['g', 'h'] }]) });
    run.given(...awaiting(run, 'g'), ...awaiting(run, 'h'));
    const events = run.propose([
      { id: 'h', title: 'H again' },
      { id: 'k', dependsOn: ['h'] },
    ]);
    expect(typesOf(events)).toEqual([
      'PlanRevised',
      'ApprovalClosed',
      'StepSuperseded:g',
      'ApprovalClosed',
      'StepMoved:h',
      'StepMoved:k',
      'StepStarted:h',
    ]);
    expect(run.state.approvals.get('gate-g')).toMatchObject({ status: 'expired', comment: REMOVED_APPROVAL_COMMENT });
    expect(run.state.approvals.get('gate-h')).toMatchObject({ status: 'expired', comment: REVISED_APPROVAL_COMMENT });
    expect(run.step('g')).toMatchObject({ status: 'superseded', error: { code: 'E_SUPERSEDED' } });
    expect(run.state.plan?.executable).toEqual(['h', 'k']);
  });

  it('is stale when a step it drops has finished since it was proposed', () => {
    const run = replanning();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b' }]) });
    const proposal = revisionOf(run.state, [{ id: 'a', title: 'A' }]);
    run.succeed('b');
    expect(run.apply(proposal)).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_STALE' });
    expect(run.lastReply).toMatchObject({ details: { issues: [{ code: 'E_REPLAN_REMOVED_FINISHED', stepId: 'b' }] } });
  });

  it('blocks a new generation that waits for a step which failed for good', () => {
    const run = replanning();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'x' }, { id: 'c', dependsOn: ['a', 'x'] }]) });
    run.fail('x', boom);
    run.apply({ kind: 'DeclineReplan', failure: 'x#1', code: 'E_NO_ALTERNATIVE', message: 'none' });
    run.fail('a', boom);
    const events = run.propose([{ id: 'a', target: 'tool:u' }, { id: 'x' }, { id: 'c', dependsOn: ['a', 'x'] }], {
      failure: 'a',
    });
    expect(typesOf(events)).toEqual(['PlanRevised', 'StepMoved:a', 'StepMoved:c', 'StepBlocked:c', 'StepStarted:a']);
    expect(run.step('c')).toMatchObject({ status: 'blocked', generation: 2 });
  });
});

/** The events of a gate of `stepId` waiting for a person (what AwaitDecision decides, evolved in directly). */
function awaiting(run: DrivenRun, stepId: string) {
  const at = run.now();
  const step = run.step(stepId);
  const approval: ApprovalRecord = {
    approvalId: `gate-${stepId}`,
    runId: 'run-1',
    stepId,
    generation: step.generation,
    kind: 'approval',
    status: 'pending',
    question: 'go?',
    taskToken: `token-${stepId}`,
    createdAt: at,
    deadline: '2026-01-02T00:00:00.000Z',
  };
  return [
    { type: 'ApprovalRequested' as const, at, approval },
    {
      type: 'StepAwaiting' as const,
      at,
      stepId,
      generation: step.generation,
      approvalId: approval.approvalId,
      attempts: 1,
    },
  ];
}

describe('the replan limits', () => {
  it('pause the run once it has made all the replans it may', () => {
    const run = new DrivenRun(initialState({ settings: { maxReplans: 1 }, targets }));
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]) });
    run.fail('a', boom);
    run.propose(substituted, { failure: 'a' });
    const events = run.fail('a', { ...boom, message: 'another way' });
    expect(typesOf(events)).toEqual(['StepFailed:a', 'StepBlocked:b', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({
      state: 'paused',
      reason: 'max_replans',
      evidence: { stepId: 'a', generation: 2, replans: 1, maxReplans: 1 },
    });
  });

  it('pause the run when the same failure comes back after a replan', () => {
    const run = failedRun();
    run.propose(substituted, { failure: 'a' });
    const events = run.fail('a', { ...boom, message: 'boom' });
    expect(typesOf(events)).toEqual(['StepFailed:a', 'StepBlocked:b', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({ state: 'paused', reason: 'no_progress' });
    expect(run.state.run.terminal?.evidence.fingerprint).toBe(run.state.run.replanFingerprints?.[0]);
  });

  it("pause the run when a failure's answer comes after the last replan was made", () => {
    const run = new DrivenRun(initialState({ settings: { maxReplans: 1 }, targets }));
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b' }]) });
    run.fail('a', boom);
    run.fail('b', { ...boom, message: 'other' });
    run.propose([{ id: 'a', target: 'tool:u' }, { id: 'b' }], { failure: 'a' });
    const events = run.propose(
      [
        { id: 'a', target: 'tool:u' },
        { id: 'b', target: 'tool:v' },
      ],
      { failure: 'b' },
    );
    expect(typesOf(events)).toEqual(['RunFinished']);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'paused', reason: 'max_replans' } });
    expect(run.state.run.revision).toBe(2);
  });
});
