import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { planJsonSchema, planStepSchema } from '../../../shared/plan/schema.ts';

const gate = (approval: Record<string, unknown>) => ({
  id: 'G',
  title: 'Gate',
  target: 'human:approver',
  dependsOn: [],
  approval: { question: 'May it go on?', timeoutSeconds: 60, ...approval },
});

const capability = (approval: unknown) => ({
  target: 'human:approver',
  description: 'a gate',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  sideEffect: 'none',
  approval,
});

describe('approval.approvers and approval.allowSelf on a plan step', () => {
  it('accepts groups that may decide and whether the starter may', () => {
    for (const approval of [{ approvers: ['finance'] }, { approvers: ['finance', 'cairn/legal'], allowSelf: true }]) {
      expect(planStepSchema.safeParse(gate(approval)).success, JSON.stringify(approval)).toBe(true);
    }
  });

  it('refuses an empty list, a blank or spaced group, too many groups and a non-boolean allowSelf', () => {
    const bad = [
      { approvers: [] },
      { approvers: [''] },
      { approvers: ['two words'] },
      { approvers: Array.from({ length: 21 }, (_, i) => `g${i}`) },
      { allowSelf: 'yes' },
    ];
    for (const approval of bad) {
      expect(planStepSchema.safeParse(gate(approval)).success, JSON.stringify(approval)).toBe(false);
    }
  });

  it('is published in the plan JSON Schema', () => {
    const text = JSON.stringify(planJsonSchema());
    expect(text).toContain('"approvers"');
    expect(text).toContain('"allowSelf"');
  });
});

describe("a catalog entry's approval rule", () => {
  it('names approvers and allowSelf, and nothing a step decides (question, timeout)', () => {
    const catalog = loadCatalog({ capabilities: [capability({ approvers: ['finance'], allowSelf: false })] });
    expect(catalog.get('human:approver')?.approval).toEqual({ approvers: ['finance'], allowSelf: false });
    expect(() => loadCatalog({ capabilities: [capability({ question: 'Go?' })] })).toThrow(/invalid catalog/);
    expect(() => loadCatalog({ capabilities: [capability({ approvers: [] })] })).toThrow(/invalid catalog/);
  });
});
