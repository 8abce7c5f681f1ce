import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../../shared/engine/run/events.ts';
import {
  REMOVED_APPROVAL_COMMENT,
  SUPERSEDED_APPROVAL_COMMENT,
} from '../../../../shared/engine/run/rules/approval-closing.ts';
import { stepExecutionName } from '../../../../shared/ports/executions.ts';
import type { ApprovalRecord } from '../../../../shared/ports/records/approvals.ts';
import { DrivenRun, planOf, typesOf } from '../../../support/decider.ts';

const GATE_ID = 'run-1.gate.g1.approval.a1.1';

/** A human gate and what waits for it; `fields` go on the gate. */
function gated(fields: Record<string, unknown> = {}, plan: Parameters<typeof planOf>[1] = {}) {
  const run = new DrivenRun();
  run.apply({
    kind: 'StartRun',
    plan: planOf(
      [
        { id: 'gate', target: 'human:ok', approval: { question: 'Ship it?', timeoutSeconds: 600 }, ...fields },
        { id: 'after', dependsOn: ['gate'] },
      ],
      plan,
    ),
  });
  return run;
}

const ofType = <T extends RunEvent['type']>(events: readonly RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

/** The gate's attempt, judged by the decision it was answered with (what its execution sends). */
function judged(run: DrivenRun, decision: 'approve' | 'reject', execution = run.execution('gate')): RunEvent[] {
  return run.apply({
    kind: 'AttemptEnded',
    stepId: 'gate',
    generation: 1,
    execution,
    attempt: 1,
    outcome:
      decision === 'approve'
        ? { kind: 'succeeded', confidence: null }
        : { kind: 'failed', error: { code: 'E_REJECTED', message: 'rejected by ana', retryable: false } },
    note: `${decision} by ana: ${decision === 'approve' ? 'pass' : 'fail'}`,
    judged: { decision, by: 'ana' },
  });
}

describe('a gate waits for a person', () => {
  it('records the approval with a deterministic id and its deadline, and the step waits on it', () => {
    const run = gated();
    const events = run.await('gate', { timeoutSeconds: 600 });
    expect(typesOf(events)).toEqual(['ApprovalRequested', 'StepAwaiting:gate']);
    const approval = run.state.approvals.get(GATE_ID);
    expect(approval).toMatchObject({
      status: 'pending',
      kind: 'approval',
      question: 'Approve gate?',
      taskToken: 'token-gate',
    });
    expect(Date.parse(approval?.deadline ?? '') - Date.parse(approval?.createdAt ?? '')).toBe(600_000);
    expect(run.status('gate')).toBe('awaiting_approval');
    expect(run.lastReply).toEqual({ ok: true, value: { approvalId: GATE_ID } });
  });

  it('asks once when the wait is retried with a new token: the token moves to the same approval', () => {
    const run = gated();
    run.await('gate');
    expect(run.await('gate')).toEqual([]); // the same wait again
    const moved = run.await('gate', { token: 'token-2' });
    expect(typesOf(moved)).toEqual(['ApprovalTokenMoved']);
    expect(run.approvals('gate')).toHaveLength(1);
    expect(run.state.approvals.get(GATE_ID)?.taskToken).toBe('token-2');
  });

  it('answers a retried wait with the decision already taken, instead of asking again', () => {
    const run = gated();
    run.await('gate');
    run.decide(GATE_ID, 'approve');
    const events = run.await('gate', { token: 'token-2' });
    expect(events).toMatchObject([
      { type: 'WaitAnswered', token: 'token-2', answer: { kind: 'decision', approvalId: GATE_ID } },
    ]);
    expect(run.approvals('gate')).toHaveLength(1);
  });

  it("releases a wait that is not the step's, or of a run that no longer lets attempts start", () => {
    const run = gated();
    const stray = run.apply({
      kind: 'AwaitDecision',
      stepId: 'gate',
      generation: 1,
      execution: 'someone-else',
      approvalKind: 'approval',
      attempt: 1,
      token: 'stray',
      timeoutSeconds: 60,
      presentation: { question: '?' },
    });
    expect(stray).toMatchObject([{ type: 'WaitAnswered', token: 'stray', answer: { kind: 'released' } }]);
    const execution = run.execution('gate');
    run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    const late = run.apply({
      kind: 'AwaitDecision',
      stepId: 'gate',
      generation: 1,
      execution,
      approvalKind: 'approval',
      attempt: 1,
      token: 'late',
      timeoutSeconds: 60,
      presentation: { question: '?' },
    });
    expect(typesOf(late)).toEqual(['WaitAnswered:gate']);
    expect(run.state.approvals.size).toBe(0);
  });
});

describe('a person decides a gate', () => {
  it('takes the decision, and the step is judged by it', () => {
    const run = gated();
    run.await('gate');
    expect(run.decide(GATE_ID, 'approve', 'ana', { comment: 'fine' })).toMatchObject([
      { type: 'ApprovalDecided', approvalId: GATE_ID, status: 'approved', by: 'ana', comment: 'fine' },
    ]);
    expect(run.lastReply).toEqual({ ok: true, value: { approvalId: GATE_ID, status: 'approved' } });
    expect(typesOf(judged(run, 'approve'))).toEqual(['StepSucceeded:gate', 'StepStarted:after']);
  });

  it('answers 404 for an unknown approval', () => {
    const run = gated();
    expect(run.decide('nope', 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 404, code: 'E_NOT_FOUND' });
  });

  it('takes the same decision by the same person again, re-answering the token only while the step waits', () => {
    const run = gated();
    run.await('gate');
    run.decide(GATE_ID, 'approve', 'ana', { comment: 'ok' });
    const again = run.decide(GATE_ID, 'approve', 'ana', { comment: 'ok' });
    expect(run.lastReply.ok).toBe(true);
    expect(again).toMatchObject([{ type: 'WaitAnswered', token: 'token-gate', answer: { kind: 'decision' } }]);
    judged(run, 'approve');
    expect(run.decide(GATE_ID, 'approve', 'ana', { comment: 'ok' })).toEqual([]);
    expect(run.lastReply.ok).toBe(true);
  });

  it('refuses another decision with 409 E_ALREADY_DECIDED, naming the one taken', () => {
    const run = gated();
    run.await('gate');
    run.decide(GATE_ID, 'approve', 'ana');
    for (const [decision, by] of [
      ['reject', 'ana'],
      ['approve', 'bob'],
    ] as const) {
      expect(run.decide(GATE_ID, decision, by)).toEqual([]);
      expect(run.lastReply).toMatchObject({
        ok: false,
        status: 409,
        code: 'E_ALREADY_DECIDED',
        details: { decision: { decision: 'approve', by: 'ana' } },
      });
    }
  });

  it('answers a closed approval by why it closed: superseded, removed, or expired', () => {
    const run = gated();
    run.await('gate');
    const closed = (comment: string): ApprovalRecord => ({
      ...(run.state.approvals.get(GATE_ID) as ApprovalRecord),
      status: 'expired',
      comment,
    });
    const cases: [string, number, string][] = [
      [SUPERSEDED_APPROVAL_COMMENT, 410, 'E_APPROVAL_SUPERSEDED'],
      [REMOVED_APPROVAL_COMMENT, 410, 'E_APPROVAL_SUPERSEDED'],
      ['the run was cancelled', 410, 'E_APPROVAL_EXPIRED'],
    ];
    const base = run.state;
    for (const [comment, status, code] of cases) {
      run.state = { ...base, approvals: new Map([[GATE_ID, closed(comment)]]) };
      expect(run.decide(GATE_ID, 'approve')).toEqual([]);
      expect(run.lastReply).toMatchObject({ ok: false, status, code });
    }
  });

  it('closes an approval decided after its deadline (announced) and answers 410 E_APPROVAL_EXPIRED', () => {
    const run = gated();
    run.await('gate', { timeoutSeconds: 60 });
    run.advance(120);
    expect(run.decide(GATE_ID, 'approve')).toMatchObject([
      { type: 'ApprovalClosed', approvalId: GATE_ID, announced: true, comment: 'no decision before the deadline' },
    ]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
    // The machine's timeout, which follows, fails the step: the decision was never taken.
    expect(run.timeOut('gate')).toMatchObject([{ type: 'StepFailed', error: { code: 'E_APPROVAL_EXPIRED' } }, {}, {}]);
  });

  it('answers 409 E_RUN_CANCELLED while a compensating cancel is under way', () => {
    const run = gated();
    run.await('gate');
    run.state = { ...run.state, run: { ...run.state.run, cancelCompensation: true } };
    expect(run.decide(GATE_ID, 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_RUN_CANCELLED' });
    expect(run.state.approvals.get(GATE_ID)?.status).toBe('pending');
  });

  it('closes the approval of a step that no longer waits and answers 410 E_APPROVAL_EXPIRED', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([
        { id: 'gate', target: 'human:ok' },
        { id: 'other', onFailure: 'fail-run' },
      ]),
    });
    run.await('gate');
    run.fail('other', { code: 'E_X', message: 'no', retryable: false });
    expect(run.status('gate')).toBe('cancelled');
    // Closed with its step when the run ended: a decision now decides nothing.
    expect(run.state.approvals.get(GATE_ID)?.status).toBe('expired');
    expect(run.decide(GATE_ID, 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
  });

  it('refuses an edit without its output with 422 E_INVALID_OUTPUT and keeps the approval pending', () => {
    const run = gated();
    run.await('gate');
    expect(run.decide(GATE_ID, 'edit')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 422, code: 'E_INVALID_OUTPUT' });
    expect(run.state.approvals.get(GATE_ID)?.status).toBe('pending');
  });
});

describe('a review of a low-confidence result', () => {
  const REVIEW_ID = 'run-1.agent.g1.review.a1.1';

  function reviewed() {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'agent', target: 'agent:a', confidenceThreshold: 0.9 }]) });
    const step = run.step('agent');
    run.apply({
      kind: 'AwaitDecision',
      stepId: 'agent',
      generation: 1,
      execution: run.execution('agent'),
      approvalKind: 'review',
      attempt: 1,
      token: 'review-token',
      timeoutSeconds: 300,
      presentation: { question: 'Review it', heldOutput: { answer: 41 }, heldConfidence: 0.5 },
    });
    expect(step.status).toBe('running');
    return run;
  }

  it('holds the result for the person to see', () => {
    const run = reviewed();
    expect(run.state.approvals.get(REVIEW_ID)).toMatchObject({
      kind: 'review',
      heldOutput: { answer: 41 },
      heldConfidence: 0.5,
    });
  });

  it('takes an approval, an edit with its output, and a rejection (whose output is not kept)', () => {
    const approve = reviewed();
    approve.decide(REVIEW_ID, 'approve');
    expect(approve.state.approvals.get(REVIEW_ID)).toMatchObject({ status: 'approved', decidedBy: 'ana' });

    const edit = reviewed();
    edit.decide(REVIEW_ID, 'edit', 'bob', { output: { answer: 42 } });
    expect(edit.state.approvals.get(REVIEW_ID)).toMatchObject({ status: 'edited', output: { answer: 42 } });

    const reject = reviewed();
    reject.decide(REVIEW_ID, 'reject', 'cy', { output: { ignored: true }, comment: 'wrong' });
    expect(reject.state.approvals.get(REVIEW_ID)?.status).toBe('rejected');
    expect(reject.state.approvals.get(REVIEW_ID)?.output).toBeUndefined();
    for (const run of [approve, edit, reject]) expect(run.lastReply.ok).toBe(true);
  });
});

describe('a wait that timed out', () => {
  it('honours a decision taken before the timeout whose token answer came too late: a new execution judges it', () => {
    const run = gated();
    run.await('gate');
    const waiting = run.execution('gate');
    run.decide(GATE_ID, 'approve');
    const events = run.timeOut('gate');
    const redelivered = ofType(events, 'DecisionRedelivered');
    expect(typesOf(events)).toEqual(['DecisionRedelivered:gate']);
    expect(redelivered[0]).toMatchObject({ approvalId: GATE_ID, attempt: 1 });
    const execution = redelivered[0]?.execution ?? '';
    expect(execution).toBe(`${stepExecutionName('run-1', 'gate', 1)}-d1`);
    expect(execution).not.toBe(waiting);
    expect(run.step('gate')).toMatchObject({ status: 'running', claimedBy: execution });
    expect(run.state.approvals.get(GATE_ID)?.status).toBe('approved');
    expect(judged(run, 'approve', waiting)).toEqual([]); // the timed-out execution's word counts no more
    expect(typesOf(judged(run, 'approve', execution))).toEqual(['StepSucceeded:gate', 'StepStarted:after']);
  });

  it('honours a decision taken before the wait failed otherwise (GateFailed): a new execution judges it', () => {
    const run = gated();
    run.await('gate');
    run.decide(GATE_ID, 'approve');
    const error = { code: 'E_GATE', message: 'the wait failed', retryable: false };
    const events = run.apply({ kind: 'ExecutionFailed', stepId: 'gate', generation: 1, attempt: 1, error });
    expect(typesOf(events)).toEqual(['DecisionRedelivered:gate']);
  });

  it("fails the gate with the wait's error when the wait failed before any decision", () => {
    const run = gated();
    run.await('gate');
    const error = { code: 'E_GATE', message: 'the wait failed', retryable: false };
    const events = run.apply({ kind: 'ExecutionFailed', stepId: 'gate', generation: 1, attempt: 1, error });
    expect(typesOf(events)).toEqual(['StepFailed:gate', 'ApprovalClosed', 'StepBlocked:after', 'RunFinished']);
  });

  it('hands the decision on again, to the next -d<n> execution, if the judging execution lost it too', () => {
    const run = gated();
    run.await('gate');
    run.decide(GATE_ID, 'reject');
    run.timeOut('gate');
    const first = run.execution('gate');
    expect(run.await('gate', { token: 'token-d1' })).toMatchObject([
      { type: 'WaitAnswered', answer: { kind: 'decision', approvalId: GATE_ID } },
    ]);
    const events = ofType(run.timeOut('gate'), 'DecisionRedelivered');
    expect(events[0]?.execution).toBe(`${stepExecutionName('run-1', 'gate', 1)}-d2`);
    expect(run.execution('gate')).not.toBe(first);
    expect(typesOf(judged(run, 'reject'))).toEqual(['StepFailed:gate', 'StepBlocked:after', 'RunFinished']);
  });

  it('closes the pending approval (announced) and fails the step E_APPROVAL_EXPIRED without a decision', () => {
    const run = gated();
    run.await('gate');
    const events = run.timeOut('gate');
    expect(typesOf(events)).toEqual(['ApprovalClosed', 'StepFailed:gate', 'StepBlocked:after', 'RunFinished']);
    expect(events[0]).toMatchObject({ announced: true, comment: 'no decision before the deadline' });
    expect(run.step('gate').error).toMatchObject({
      code: 'E_APPROVAL_EXPIRED',
      message: 'no decision on the approval of gate within 600s',
    });
    expect(run.timeOut('gate')).toEqual([]);
    run.decide(GATE_ID, 'approve');
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
  });

  it('under onTimeout pause, leaves the step waiting and the run paused approval_expired', () => {
    const run = gated({ approval: { question: 'Ship it?', timeoutSeconds: 600, onTimeout: 'pause' } });
    run.await('gate');
    expect(typesOf(run.timeOut('gate'))).toEqual(['ApprovalClosed', 'RunFinished']);
    expect(run.status('gate')).toBe('awaiting_approval');
    expect(run.state.run.terminal).toMatchObject({
      state: 'paused',
      reason: 'approval_expired',
      evidence: { stepId: 'gate', kind: 'approval' },
    });
    run.decide(GATE_ID, 'approve');
    expect(run.lastReply).toMatchObject({ ok: false, status: 410, code: 'E_APPROVAL_EXPIRED' });
  });

  it("fails the step as stopped by the run's budget when the budget shortened the wait", () => {
    const run = gated({}, { budget: { maxSeconds: 100 } });
    // Taken 3s after the run's creation: the window is the 97s its budget has left, not the gate's 600s.
    run.await('gate', { timeoutSeconds: 97 });
    run.advance(96);
    const events = run.timeOut('gate');
    expect(ofType(events, 'ApprovalClosed')[0]?.comment).toMatch(/^closed: .*before the run's seconds ran out$/);
    expect(run.step('gate').error).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { scope: 'run' } });
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', reason: 'budget_exhausted' });
  });
});
