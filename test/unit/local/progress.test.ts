import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../../infra/local/progress.ts';
import type { BusEnvelope } from '../../../shared/adapters/local/event-bus.ts';
import { rawControls } from '../../support/raw-controls.ts';

const envelope = (type: string, detail: Record<string, unknown>): BusEnvelope => ({
  version: '0',
  id: `${type}-${String(detail.stepId ?? '')}`,
  'detail-type': type,
  source: 'cairn',
  account: '000000000000',
  time: '2026-11-30T16:00:00Z',
  region: 'local',
  resources: [],
  detail: { runId: 'r1', generation: 1, ...detail },
});

function feed(events: BusEnvelope[]): string[] {
  const lines: string[] = [];
  const print = createProgressPrinter((line) => lines.push(line));
  for (const event of events) print(event);
  return lines;
}

describe('createProgressPrinter', () => {
  it('writes one line per transition with a done/total counter', () => {
    const lines = feed([
      envelope('RunStarted', { objective: 'o', steps: 2, revision: 1 }),
      envelope('StepStarted', { stepId: 'a', target: 'tool:x' }),
      envelope('StepSucceeded', { stepId: 'a', attempts: 1 }),
      envelope('StepSkipped', { stepId: 'b', reason: 'when was false' }),
    ]);

    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(/^\[1\/2\]\s+✓ a succeeded/);
    expect(lines[3]).toMatch(/^\[2\/2\]\s+· b skipped: when was false/);
  });

  it('does not count failed or blocked steps as done, so a replan never makes the counter go backwards', () => {
    const lines = feed([
      envelope('RunStarted', { objective: 'o', steps: 2, revision: 1 }),
      envelope('StepFailed', { stepId: 'a', attempts: 1, final: true, error: { code: 'E', message: 'm' } }),
      envelope('StepBlocked', { stepId: 'b', blockedBy: ['a'] }),
      envelope('PlanRevised', { revision: 2, reason: 'replan' }),
      envelope('StepStarted', { stepId: 'a', target: 'tool:y' }),
      envelope('StepSucceeded', { stepId: 'a', attempts: 1 }),
    ]);

    expect(lines.map((line) => line.slice(0, 5))).toEqual(['[0/2]', '[0/2]', '[0/2]', '[0/2]', '[0/2]', '[1/2]']);
  });

  it('opens invalidated steps again', () => {
    const lines = feed([
      envelope('RunStarted', { objective: 'o', steps: 1, revision: 1 }),
      envelope('StepSucceeded', { stepId: 'a', attempts: 1 }),
      envelope('StepsInvalidated', { stepIds: ['a'], reason: 'resource changed' }),
    ]);

    expect(lines.at(-1)).toMatch(/^\[0\/1\]\s+⟲ stale: a/);
  });

  it('opens the steps of every part of an invalidation announced in parts, and says which part a line shows', () => {
    const lines = feed([
      envelope('RunStarted', { objective: 'o', steps: 3, revision: 1 }),
      envelope('StepSucceeded', { stepId: 'a', attempts: 1 }),
      envelope('StepSucceeded', { stepId: 'b', attempts: 1 }),
      envelope('StepSucceeded', { stepId: 'c', attempts: 1 }),
      envelope('StepsInvalidated', { stepIds: ['a', 'b'], part: 1, parts: 2, total: 3, reason: 'changed' }),
      envelope('StepsInvalidated', { stepIds: ['c'], part: 2, parts: 2, total: 3, reason: 'changed' }),
    ]);

    expect(lines.at(-2)).toMatch(/^\[1\/3\]\s+⟲ stale: a, b \(changed\) \[part 1 of 2, 3 steps\]$/);
    expect(lines.at(-1)).toMatch(/^\[0\/3\]\s+⟲ stale: c/);
  });

  it('says how many more causes a block has than it names', () => {
    const lines = feed([envelope('StepBlocked', { stepId: 'z', blockedBy: ['a', 'b'], blockedByCount: 30 })]);
    expect(lines[0]).toMatch(/z blocked by a, b and 28 more$/);
  });

  it('shows the controls in an objective, an error message or a reason as escapes, one line per event', () => {
    const lines = feed([
      envelope('RunStarted', {
        objective: 'report\u001b]0;pwned\u0007\r\u202eevil\nrun r1 complete',
        steps: 1,
        revision: 1,
      }),
      envelope('StepFailed', { stepId: 'a', final: true, error: { code: 'E', message: 'no\u001b[2J\u009b31m' } }),
      envelope('PlanRevised', { revision: 2, reason: 'why\tnot\u2066' }),
    ]);

    expect(lines.flatMap(rawControls)).toEqual([]);
    expect(lines.join('\n').split('\n')).toHaveLength(3);
    expect(lines[0]).toContain('report\\u001b]0;pwned\\u0007\\u000d\\u202eevil\\u000arun r1 complete');
    expect(lines[1]).toMatch(/a failed: E no\\u001b\[2J\\u009b31m$/);
    expect(lines[2]).toContain('why\\u0009not\\u2066');
  });
});
