import { describe, expect, it } from 'vitest';
import { isCertainlyValidStep } from '../../../shared/plan/rules/fast-shape.ts';
import { planJsonSchema, planStepSchema } from '../../../shared/plan/schema.ts';

const gate = (approval: Record<string, unknown>) => ({
  id: 'G',
  title: 'Gate',
  target: 'human:approver',
  dependsOn: [],
  approval: { question: 'May it go on?', timeoutSeconds: 60, ...approval },
});

describe('approval.onTimeout', () => {
  it('accepts fail and pause, and no policy at all', () => {
    for (const approval of [{}, { onTimeout: 'fail' }, { onTimeout: 'pause' }]) {
      expect(planStepSchema.safeParse(gate(approval)).success, JSON.stringify(approval)).toBe(true);
      expect(isCertainlyValidStep(gate(approval)), JSON.stringify(approval)).toBe(true);
    }
  });

  it('refuses any other policy, in the schema and in the fast path', () => {
    for (const onTimeout of ['wait', '', null, 1]) {
      expect(planStepSchema.safeParse(gate({ onTimeout })).success).toBe(false);
      expect(isCertainlyValidStep(gate({ onTimeout }))).toBe(false);
    }
  });

  it('is published in the plan JSON Schema', () => {
    const text = JSON.stringify(planJsonSchema());
    expect(text).toContain('"onTimeout"');
    expect(text).toContain('"pause"');
  });
});
