import { describe, expect, it } from 'vitest';
import {
  DIAGNOSIS_MESSAGE_CHARS,
  DIAGNOSIS_TRACE_ENTRIES,
  diagnoseFailure,
  triggerFor,
} from '../../../shared/engine/replan/diagnosis.ts';
import { HISTORY_OUTPUT_CHARS, summarizeHistory } from '../../../shared/engine/replan/history.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import type { TraceEntry } from '../../../shared/ports/store.ts';
import { group, plan, researchPlan, statuses, step } from './replan-testkit.ts';

const at = '2025-03-01T10:00:00.000Z';
const trace = (n: number): TraceEntry[] =>
  Array.from({ length: n }, (_, i) => ({ kind: i === n - 1 ? 'fail' : 'exec', at, text: `attempt ${i + 1}` }));

describe('diagnoseFailure', () => {
  const p = researchPlan();
  const states = statuses({
    'a.search': 'succeeded',
    'b.search': 'succeeded',
    'b.fetch': 'succeeded',
    write: 'blocked',
  });

  it('says what failed, on which target, why, after how many attempts, and what is finished or blocked', () => {
    const diagnosis = diagnoseFailure({
      plan: p,
      failed: {
        stepId: 'a.fetch',
        error: { code: 'E_CAPABILITY_TIMEOUT', message: 'timed out after 30s', retryable: true },
        attempts: 4,
        trace: trace(2),
      },
      states,
    });
    expect(diagnosis).toEqual({
      stepId: 'a.fetch',
      code: 'E_CAPABILITY_TIMEOUT',
      message: 'timed out after 30s',
      target: 'tool:echo',
      title: 'step a.fetch',
      lineage: 'a.fetch',
      trigger: 'step_failed',
      retryable: true,
      attempts: 4,
      trace: [`[exec] ${at} attempt 1`, `[fail] ${at} attempt 2`],
      finished: ['a.search', 'b.search', 'b.fetch'],
      blocked: ['write', 'review'],
    });
  });

  it('clips the message and keeps only the last trace entries', () => {
    const diagnosis = diagnoseFailure({
      plan: p,
      failed: { stepId: 'a.fetch', error: { code: 'E_X', message: 'x'.repeat(50_000) }, attempts: 1, trace: trace(40) },
    });
    expect(diagnosis.message.length).toBeLessThanOrEqual(DIAGNOSIS_MESSAGE_CHARS);
    expect(diagnosis.trace).toHaveLength(DIAGNOSIS_TRACE_ENTRIES);
    expect(diagnosis.trace?.at(-1)).toContain('attempt 40');
  });

  it('takes the target it is told, the lineage from replaces links, and copes with a missing error', () => {
    const diagnosis = diagnoseFailure({
      plan: p,
      failed: { stepId: 'a.fetch', target: 'tool:echo-backup', attempts: 2 },
      lineage: { 'a.fetch': 'a.read' },
      trigger: 'manual',
    });
    expect(diagnosis).toMatchObject({
      code: 'E_UNKNOWN',
      target: 'tool:echo-backup',
      lineage: 'a.read',
      trigger: 'manual',
    });
  });

  it.each([
    ['E_REJECTED', 'approval_rejected'],
    ['E_OUTPUT_SCHEMA', 'verify_failed'],
    ['E_ASSERTION_FAILED', 'verify_failed'],
    ['E_NO_BINDING', 'capability_unavailable'],
    ['E_CAPABILITY_REJECTED', 'capability_unavailable'],
    ['NOT_FOUND', 'capability_unavailable'],
    ['E_CAPABILITY_TIMEOUT', 'step_failed'],
    ['E_BUDGET_EXHAUSTED', 'budget'],
  ])('reads the trigger of %s as %s', (code, trigger) => {
    expect(triggerFor(code)).toBe(trigger);
  });
});

describe('summarizeHistory', () => {
  it('collapses a finished group to one line and lists executed steps with clipped outputs and errors', () => {
    const p = researchPlan();
    const history = summarizeHistory(p, [
      { stepId: 'a.search', status: 'succeeded', output: { results: ['x'] } },
      { stepId: 'a.fetch', status: 'failed', error: { code: 'E_HTTP', message: 'forbidden' }, attempts: 3 },
      { stepId: 'b.search', status: 'succeeded', output: { results: [] } },
      { stepId: 'b.fetch', status: 'skipped' },
      { stepId: 'write', status: 'blocked' },
      { stepId: 'review', status: 'pending' },
    ]);
    expect(history).toEqual([
      {
        stepId: 'a.search',
        title: 'step a.search',
        target: 'tool:echo',
        status: 'succeeded',
        summary: 'output {"results":["x"]}',
      },
      {
        stepId: 'a.fetch',
        title: 'step a.fetch',
        target: 'tool:echo',
        status: 'failed',
        summary: 'E_HTTP: forbidden after 3 attempts',
      },
      {
        stepId: 'b',
        title: 'group b',
        target: null,
        status: 'succeeded',
        summary: 'all 2 steps finished: 1 succeeded, 1 skipped',
      },
      {
        stepId: 'write',
        title: 'step write',
        target: 'tool:echo',
        status: 'blocked',
        summary: 'an upstream step failed',
      },
    ]);
  });

  it('collapses only the topmost finished group', () => {
    const p = plan([
      group('outer'),
      group('inner', [], 'outer'),
      step('x', [], { parentId: 'inner' }),
      step('y', [], { parentId: 'outer' }),
    ]);
    const history = summarizeHistory(p, [
      { stepId: 'x', status: 'succeeded', output: 1 },
      { stepId: 'y', status: 'succeeded', output: 2 },
    ]);
    expect(history.map((h) => h.stepId)).toEqual(['outer']);
  });

  it('stays bounded for a 64-step plan with a large output per step', () => {
    const big = { text: 'lorem ipsum '.repeat(20_000), rows: Array.from({ length: 2000 }, (_, i) => ({ i })) };
    const flat = plan(
      Array.from({ length: 64 }, (_, i) => step(`s${i}`, i === 0 ? [] : [`s${i - 1}`], { title: 'T'.repeat(200) })),
    );
    const records = flat.steps.map((s, i) => ({
      stepId: s.id,
      status: (i === 63 ? 'failed' : 'succeeded') as StepStatus,
      output: big,
      error: i === 63 ? { code: 'E_BIG', message: 'm'.repeat(100_000) } : null,
      attempts: 4,
    }));
    const history = summarizeHistory(flat, records);
    expect(history).toHaveLength(64);
    const perEntry = 64 + 200 + HISTORY_OUTPUT_CHARS + 400;
    expect(JSON.stringify(history).length).toBeLessThan(64 * perEntry);
    expect(JSON.stringify(records).length).toBeGreaterThan(64 * 200_000);

    const grouped = plan([
      ...Array.from({ length: 8 }, (_, g) => group(`g${g}`)),
      ...Array.from({ length: 56 }, (_, i) => step(`g${i % 8}.s${i}`, [], { parentId: `g${i % 8}` })),
    ]);
    const groupedHistory = summarizeHistory(
      grouped,
      grouped.steps
        .filter((s) => s.target !== null)
        .map((s) => ({ stepId: s.id, status: 'succeeded' as const, output: big })),
    );
    expect(groupedHistory).toHaveLength(8);
    expect(JSON.stringify(groupedHistory).length).toBeLessThan(8 * 300);
  });
});
