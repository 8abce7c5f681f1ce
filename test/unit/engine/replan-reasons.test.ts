import { describe, expect, it } from 'vitest';
import {
  budgetReason,
  describeChange,
  lineageOf,
  priorReplans,
  replanTarget,
  revisionReason,
} from '../../../shared/engine/replan/reasons.ts';
import type { ReplanRecord, RunRecord, StepRecord } from '../../../shared/ports/store.ts';

const step = (stepId: string, status: StepRecord['status'], code?: string): StepRecord => ({
  runId: 'r1',
  stepId,
  status,
  generation: 1,
  upstream: [],
  remaining: 0,
  released: [],
  attempts: 1,
  trace: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...(code === undefined ? {} : { error: { code, message: `${stepId} broke`, retryable: false } }),
});

const replan = (revision: number, stepId: string, replaces?: Record<string, string>): ReplanRecord => ({
  revision,
  stepId,
  code: 'E_TOOL',
  change: { kind: 'rewrite' },
  reason: 'x',
  at: '2026-01-01T00:00:00.000Z',
  ...(replaces === undefined ? {} : { replaces }),
});

const run = (extra: Partial<RunRecord>): RunRecord => ({ runId: 'r1', ...extra }) as RunRecord;

describe('priorReplans', () => {
  it('tells the planner only replans made around a failure, oldest first', () => {
    const told = priorReplans({ replanLog: [replan(2, 'fetch'), replan(3, ''), replan(4, 'parse', { p2: 'parse' })] });
    expect(told.map((r) => [r.revision, r.stepId, r.replaces])).toEqual([
      [2, 'fetch', undefined],
      [4, 'parse', { p2: 'parse' }],
    ]);
  });
});

describe('lineageOf', () => {
  it('merges every replan’s replacements into one lineage', () => {
    expect(lineageOf({ replanLog: [replan(2, 'a', { a2: 'a' }), replan(3, 'b', { b2: 'b' })] })).toMatchObject({
      a2: 'a',
      b2: 'b',
    });
  });
});

describe('describeChange', () => {
  it('names a substitution, a method, a budget cut and a rewrite in one line each', () => {
    expect(describeChange({ kind: 'substitute', stepId: 's', from: 'tool:a', to: 'tool:b' })).toBe(
      's now runs tool:b instead of tool:a',
    );
    expect(describeChange({ kind: 'method', path: '', task: 't', from: 'm1' })).toBe(
      'another method for the objective (m1 → another)',
    );
    expect(describeChange({ kind: 'budget', dropped: ['x'], capped: [] })).toBe('a cheaper plan (dropped x)');
    expect(describeChange({ kind: 'rewrite' })).toBe('the plan was rewritten around it');
  });
});

describe('revisionReason and budgetReason', () => {
  it('names the failure, a person’s clipped reason and the change', () => {
    const failed = step('fetch', 'failed', 'E_TOOL');
    expect(revisionReason(failed, { kind: 'rewrite' }, undefined)).toBe(
      'replan: fetch failed (E_TOOL); the plan was rewritten around it',
    );
    const manual = revisionReason(undefined, { kind: 'rewrite' }, 'y'.repeat(500));
    expect(manual.startsWith('manual replan (')).toBe(true);
    expect(manual.length).toBeLessThan(300);
  });

  it('names the exhausted limits of a budget replan', () => {
    const reason = budgetReason({ exhausted: [{ dimension: 'tokens', spent: 120, limit: 100 }] } as never, {
      kind: 'budget',
      dropped: [],
      capped: ['y'],
    });
    expect(reason).toBe('budget replan: run budget exhausted (tokens 120 of 100); a cheaper plan (capped y)');
  });
});

describe('replanTarget', () => {
  it('revises around the first failed step in plan order', () => {
    const records = [step('b', 'failed', 'E_B'), step('a', 'failed', 'E_A'), step('c', 'succeeded')];
    expect(replanTarget(run({}), ['a', 'b', 'c'], records)?.stepId).toBe('a');
  });

  it('revises around the gate a run was paused for when its approval expired and nothing failed', () => {
    const paused = run({
      terminal: { state: 'paused', reason: 'approval_expired', evidence: { stepId: 'gate' }, at: 'now' } as never,
    });
    const target = replanTarget(paused, ['gate'], [step('gate', 'awaiting_approval')]);
    expect(target?.error).toMatchObject({ code: 'E_APPROVAL_EXPIRED', retryable: false });
  });

  it('finds nothing to revise around when nothing failed and no gate expired', () => {
    expect(replanTarget(run({}), ['a'], [step('a', 'succeeded')])).toBeUndefined();
  });
});
