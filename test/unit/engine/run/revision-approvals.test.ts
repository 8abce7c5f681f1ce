import { describe, expect, it } from 'vitest';
import { CANCELLED_REVISION_COMMENT } from '../../../../shared/engine/run/rules/approval-closing.ts';
import {
  REVISION_BUDGET_COMMENT,
  REVISION_EXPIRED_COMMENT,
  UNFIT_REVISION_COMMENT,
} from '../../../../shared/engine/run/rules/revisions.ts';
import type { RunSettings } from '../../../../shared/engine/run/state.ts';
import type { Plan } from '../../../../shared/plan/schema.ts';
import { DrivenRun, initialState, planOf, typesOf } from '../../../support/decider.ts';

const boom = { code: 'E_X', message: 'boom', retryable: false };
const targets = (target: string) => ({
  sideEffect: target === 'tool:write' ? ('mutating' as const) : ('none' as const),
});
const HELD = 'run-1.revision.r2.1';

function replanning(settings: Partial<RunSettings> = {}, fields: Partial<Plan> = {}): DrivenRun {
  const run = new DrivenRun(initialState({ settings: { maxReplans: 3, ...settings }, targets }));
  run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }], fields) });
  return run;
}

/** a failed, and the replanner's answer brings in a mutating target: held for a person. */
function heldRun(settings: Partial<RunSettings> = {}, fields: Partial<Plan> = {}): DrivenRun {
  const run = replanning(settings, fields);
  run.fail('a', boom);
  const events = run.propose(
    [
      { id: 'a', target: 'tool:write' },
      { id: 'b', dependsOn: ['a'] },
    ],
    { failure: 'a' },
  );
  expect(typesOf(events)).toEqual(['RevisionHeld']);
  return run;
}

const decide = (run: DrivenRun, decision: 'approve' | 'reject' | 'edit', extra: { output?: unknown } = {}) =>
  run.apply({ kind: 'DecideApproval', approvalId: HELD, decision, by: 'ana', ...extra });

describe('a revision that adds a mutating target', () => {
  it('waits for a person in an approval of kind revision, with the default window as its deadline', () => {
    const run = heldRun({ approvalTimeoutSeconds: 600 });
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'awaiting_approval', approvalId: HELD } });
    const held = run.events.at(-1);
    expect(held).toMatchObject({ type: 'RevisionHeld', announced: true });
    const approval = run.state.approvals.get(HELD);
    expect(approval).toMatchObject({
      stepId: '~revision~2',
      generation: 2,
      kind: 'revision',
      status: 'pending',
      taskToken: '-',
      input: { revision: 2, targets: ['tool:write'] },
      heldRevision: { baseRevision: 1, targets: ['tool:write'], failure: { stepId: 'a', generation: 1 } },
    });
    expect(Date.parse(approval?.deadline ?? '') - Date.parse(approval?.createdAt ?? '')).toBe(600_000);
    expect(run.state.run).toMatchObject({ revision: 1, status: 'running' });
    expect(run.state.run.terminal).toBeUndefined();
  });

  it("waits no longer than the run's seconds budget leaves", () => {
    const run = heldRun({}, { budget: { maxSeconds: 100 } });
    const approval = run.state.approvals.get(HELD);
    // Created four seconds into the run: 96 of its 100 seconds are left.
    expect(Date.parse(approval?.deadline ?? '') - Date.parse(approval?.createdAt ?? '')).toBe(96_000);
  });

  it('is made current once approved', () => {
    const run = heldRun();
    const events = decide(run, 'approve');
    expect(typesOf(events)).toEqual(['ApprovalDecided', 'PlanRevised', 'StepMoved:a', 'StepMoved:b', 'StepStarted:a']);
    expect(events[0]).toMatchObject({ status: 'approved', by: 'ana', announced: true });
    expect(run.lastReply).toEqual({ ok: true, value: { approvalId: HELD, status: 'approved', revision: 2 } });
    expect(run.state.approvals.get(HELD)).toMatchObject({ status: 'approved', decidedBy: 'ana' });
    expect(run.state.run.replanLog?.[0]).toMatchObject({ failure: 'a#1', revision: 2 });
    expect(run.state.plan?.byId.get('a')?.target).toBe('tool:write');
  });

  it('leaves the failure it answered standing once rejected', () => {
    const run = heldRun();
    expect(typesOf(decide(run, 'reject'))).toEqual(['ApprovalDecided', 'ReplanDeclined:a', 'RunFinished']);
    expect(run.lastReply).toEqual({ ok: true, value: { approvalId: HELD, status: 'rejected' } });
    expect(run.state.run.terminal).toMatchObject({
      state: 'failed',
      reason: 'step_failed',
      evidence: { replans: [{ failure: 'a#1', code: 'E_REVISION_REJECTED' }] },
    });
    expect(run.state.run.revision).toBe(1);
  });

  it('is dropped at its deadline when nobody decided it, and later decisions are told so', () => {
    const run = heldRun();
    const events = run.apply({ kind: 'RevisionWaitExpired', approvalId: HELD });
    expect(typesOf(events)).toEqual(['ApprovalClosed', 'ReplanDeclined:a', 'RunFinished']);
    expect(events[0]).toMatchObject({ comment: REVISION_EXPIRED_COMMENT, announced: true });
    expect(run.state.run.terminal?.evidence).toMatchObject({ replans: [{ code: 'E_APPROVAL_EXPIRED' }] });
    expect(run.apply({ kind: 'RevisionWaitExpired', approvalId: HELD })).toEqual([]);
    expect(decide(run, 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
  });

  it("says so when its deadline was the run's seconds budget", () => {
    const run = heldRun({}, { budget: { maxSeconds: 100 } });
    const events = run.apply({ kind: 'RevisionWaitExpired', approvalId: HELD });
    expect(events[0]).toMatchObject({ type: 'ApprovalClosed', comment: REVISION_BUDGET_COMMENT });
  });

  it('expires when decided after its deadline (410), as its timer would have', () => {
    const run = heldRun({ approvalTimeoutSeconds: 1 });
    run.apply({ kind: 'AwaitRun', token: 'waiter', opening: 0 });
    const events = decide(run, 'approve');
    expect(typesOf(events)).toEqual(['ApprovalClosed', 'ReplanDeclined:a', 'RunFinished']);
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
    expect(run.state.approvals.get(HELD)).toMatchObject({ status: 'expired', comment: REVISION_EXPIRED_COMMENT });
  });

  it('is approved or rejected, never edited, and decided once', () => {
    const run = heldRun();
    expect(decide(run, 'edit', { output: {} })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_INVALID_OUTPUT' });
    expect(decide(run, 'approve', { output: { x: 1 } })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_INVALID_OUTPUT' });
    decide(run, 'approve');
    expect(decide(run, 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_ALREADY_DECIDED' });
  });

  it('closes with its run cancelled, and a decision then is refused as cancelled', () => {
    const run = heldRun();
    run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(run.state.approvals.get(HELD)).toMatchObject({ status: 'expired', comment: CANCELLED_REVISION_COMMENT });
    expect(decide(run, 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_RUN_CANCELLED' });
  });

  it('is stale when approved after the run moved where it no longer fits', () => {
    const run = replanning();
    // A person's replan drops b, which has not run yet; it runs and finishes while the revision waits.
    const events = run.propose([{ id: 'a', target: 'tool:write' }]);
    expect(typesOf(events)).toEqual(['RevisionHeld']);
    run.succeed('a');
    run.succeed('b');
    expect(typesOf(decide(run, 'approve'))).toEqual(['ApprovalClosed']);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_STALE' });
    expect(run.state.approvals.get(HELD)).toMatchObject({ status: 'expired', comment: UNFIT_REVISION_COMMENT });
    expect(run.state.run).toMatchObject({ revision: 1, status: 'complete' });
  });

  it('of a finished run says nothing until it is approved, which reopens the run', () => {
    const run = replanning();
    run.succeed('a');
    run.succeed('b');
    const held = run.propose([
      { id: 'a' },
      { id: 'b', dependsOn: ['a'] },
      { id: 'w', target: 'tool:write', dependsOn: ['b'] },
    ]);
    expect(held[0]).toMatchObject({ type: 'RevisionHeld', announced: false });
    expect(run.state.run.status).toBe('complete');
    const events = decide(run, 'approve');
    expect(typesOf(events)).toEqual(['ApprovalDecided', 'RunReopened', 'PlanRevised', 'StepAdded:w', 'StepStarted:w']);
    expect(events[0]).toMatchObject({ announced: false });
  });
});

describe('one held revision at a time', () => {
  it('closes as stale a second one a run stored by the many-writers core still holds, once one is approved', () => {
    const run = heldRun();
    const first = run.state.approvals.get(HELD);
    const revision = first?.heldRevision;
    if (first === undefined || revision === undefined) throw new Error('no held revision');
    const other = { ...first, approvalId: 'run-1.revision.r2.2' };
    run.given({ type: 'RevisionHeld', at: run.now(), approval: other, revision, announced: true });
    const events = decide(run, 'approve');
    expect(typesOf(events)).toContain('ApprovalClosed');
    expect(run.state.approvals.get(other.approvalId)).toMatchObject({
      status: 'expired',
      comment: 'stale: the run is at revision 2 now',
    });
  });

  /** a and b fail independently; a's answer is held. */
  function twoFailures(): DrivenRun {
    const run = new DrivenRun(initialState({ settings: { maxReplans: 3 }, targets }));
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b' }]) });
    run.fail('a', boom);
    run.fail('b', { ...boom, message: 'other' });
    expect(typesOf(run.propose([{ id: 'a', target: 'tool:write' }, { id: 'b' }], { failure: 'a' }))).toEqual([
      'RevisionHeld',
    ]);
    // b's answer comes while a's waits: not made, b waits with it.
    expect(run.propose([{ id: 'a' }, { id: 'b', target: 'tool:u' }], { failure: 'b' })).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'awaiting_approval', approvalId: HELD } });
    expect(run.apply({ kind: 'ReplanWatchExpired', failure: 'b#1' })).toEqual([]);
    expect(run.propose([{ id: 'a' }, { id: 'b', title: 'B' }])).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_REVISION_PENDING' });
    return run;
  }

  it('asks again about the failures that waited once the held one is rejected', () => {
    const run = twoFailures();
    const events = decide(run, 'reject');
    expect(typesOf(events)).toEqual(['ApprovalDecided', 'ReplanDeclined:a', 'ReplanAsked']);
    expect(events[2]).toMatchObject({ failure: 'b#1' });
    expect(run.state.run.handledFailures).toEqual(['a#1', 'b#1']);
    expect(run.state.run.status).toBe('running');
  });

  it('asks again about the failures the approved one left standing', () => {
    const run = twoFailures();
    const events = decide(run, 'approve');
    expect(typesOf(events)).toEqual(['ApprovalDecided', 'PlanRevised', 'StepMoved:a', 'StepStarted:a', 'ReplanAsked']);
    expect(events[4]).toMatchObject({ failure: 'b#1' });
    const answer = run.propose(
      [
        { id: 'a', target: 'tool:write' },
        { id: 'b', target: 'tool:u' },
      ],
      { failure: 'b' },
    );
    expect(typesOf(answer)).toEqual(['PlanRevised', 'StepMoved:b', 'StepStarted:b']);
    expect(run.lastReply).toEqual({ ok: true, value: { outcome: 'revised', revision: 3 } });
  });
});
