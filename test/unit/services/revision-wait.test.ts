import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OutboxEntry } from '../../../shared/events/outbox.ts';
import type { ApprovalRecord, HeldRevision, RunRecord } from '../../../shared/ports/store.ts';
import type { Interpreter } from '../../../shared/services/interpreter.ts';
import { revisionApprovalId } from '../../../shared/services/revision-approvals.ts';
import {
  expireRevisionWait,
  REVISION_EXPIRED_COMMENT,
  revisionWaitNext,
} from '../../../shared/services/revision-wait.ts';
import { anApproval, aPlan, aRun } from '../../support/store-fixtures.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const ref = { runId: 'run-a', stepId: '~revision~2', generation: 1 };
const held: HeldRevision = {
  baseRevision: 1,
  plan: aPlan({ revision: 2 }),
  scope: [],
  change: { kind: 'rewrite' },
  replaces: {},
  reason: 'record it',
  targets: ['tool:conformance.ledger'],
} as unknown as HeldRevision;

/** A pending revision approval whose deadline is `seconds` after T0. */
const pendingFor = (seconds: number): ApprovalRecord =>
  anApproval({
    approvalId: revisionApprovalId(ref),
    runId: ref.runId,
    stepId: ref.stepId,
    generation: 2,
    kind: 'revision',
    status: 'pending',
    taskToken: '-',
    heldRevision: held,
    createdAt: new Date(T0).toISOString(),
    deadline: new Date(T0 + seconds * 1000).toISOString(),
  });

/** An interpreter over one approval and one run, recording the decisions and announcements made. */
function harness(approval: ApprovalRecord | undefined, run: RunRecord = aRun({ runId: ref.runId, status: 'running' })) {
  let current = approval;
  const decisions: { patch: Partial<ApprovalRecord>; announced: boolean }[] = [];
  let personFirst = false;
  const store = {
    getApproval: async (id: string) => (current?.approvalId === id ? current : undefined),
    decideApproval: async (_id: string, patch: Partial<ApprovalRecord>, announce?: OutboxEntry) => {
      if (personFirst || current?.status !== 'pending') return undefined;
      decisions.push({ patch, announced: announce !== undefined });
      current = { ...current, ...patch } as ApprovalRecord;
      return current;
    },
    getStep: async () => undefined,
  };
  const ctx = {
    deps: { store, clock: () => new Date() },
    now: () => new Date().toISOString(),
    getRun: async () => run,
    announce: (runId: string, events: unknown[]) => ({ id: 'e', runId, at: '', events }) as unknown as OutboxEntry,
  } as unknown as Interpreter;
  return {
    ctx,
    decisions,
    personDecidesFirst: () => {
      personFirst = true;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});

afterEach(() => {
  vi.useRealTimers();
});

describe('revisionWaitNext', () => {
  it('waits the whole seconds left until the approval deadline, fewer as time passes', async () => {
    const { ctx } = harness(pendingFor(90.5));
    const first = { ...ref, executionId: 'x', previous: null };

    expect(await revisionWaitNext(ctx, first)).toEqual({
      action: 'await',
      attempt: 1,
      kind: 'revision',
      timeoutSeconds: 91,
    });
    vi.advanceTimersByTime(60_000);
    expect(await revisionWaitNext(ctx, first)).toMatchObject({ action: 'await', timeoutSeconds: 31 });
    vi.advanceTimersByTime(60_000);
    // Past the deadline: the shortest wait Step Functions takes, so that it expires at once.
    expect(await revisionWaitNext(ctx, first)).toMatchObject({ action: 'await', timeoutSeconds: 1 });
  });

  it('is done once the approval is decided, when it is unknown, and when the wait came back', async () => {
    const first = { ...ref, executionId: 'x', previous: null };

    expect(await revisionWaitNext(harness({ ...pendingFor(60), status: 'approved' }).ctx, first)).toEqual({
      action: 'done',
      attempt: 1,
    });
    expect(await revisionWaitNext(harness(undefined).ctx, first)).toMatchObject({ action: 'done' });
    const back = { ...first, previous: { action: 'await', attempt: 1, kind: 'revision', timeoutSeconds: 60 } as const };
    expect(await revisionWaitNext(harness(pendingFor(60)).ctx, back)).toMatchObject({ action: 'done' });
  });
});

describe('expireRevisionWait', () => {
  it('expires a pending approval with the reason, announced while the run is open, and rejects the revision', async () => {
    const { ctx, decisions } = harness(pendingFor(60));
    vi.advanceTimersByTime(60_000);

    expect(await expireRevisionWait(ctx, ref)).toEqual({ outcome: 'failed' });
    expect(decisions).toEqual([
      {
        patch: { status: 'expired', decidedAt: new Date(T0 + 60_000).toISOString(), comment: REVISION_EXPIRED_COMMENT },
        announced: true,
      },
    ]);
  });

  it('announces nothing for a finished run', async () => {
    const { ctx, decisions } = harness(pendingFor(60), aRun({ runId: ref.runId, status: 'complete' }));

    await expireRevisionWait(ctx, ref);

    expect(decisions.map((d) => d.announced)).toEqual([false]);
  });

  it('leaves a decision that won the race alone, and a repeat after its own expiry decides nothing again', async () => {
    const raced = harness(pendingFor(60));
    raced.personDecidesFirst();
    expect(await expireRevisionWait(raced.ctx, ref)).toEqual({ outcome: 'noop' });

    const repeated = harness({ ...pendingFor(60), status: 'expired', comment: REVISION_EXPIRED_COMMENT });
    expect(await expireRevisionWait(repeated.ctx, ref)).toEqual({ outcome: 'failed' });
    expect(repeated.decisions).toEqual([]);
    const closed = harness({ ...pendingFor(60), status: 'rejected' });
    expect(await expireRevisionWait(closed.ctx, ref)).toEqual({ outcome: 'noop' });
  });
});
