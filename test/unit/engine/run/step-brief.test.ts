import { describe, expect, it } from 'vitest';
import { decide } from '../../../../shared/engine/run/decide.ts';
import type { Effect } from '../../../../shared/engine/run/effects.ts';
import { planView } from '../../../../shared/engine/run/state.ts';
import {
  BRIEF_LEFT_OUT,
  briefOf,
  MAX_BRIEF_BYTES,
  stepBrief,
  stepBriefSchema,
} from '../../../../shared/engine/run/step-brief.ts';
import { utf8Bytes } from '../../../../shared/events/put-events.ts';
import type { PlanStep } from '../../../../shared/plan/schema.ts';
import { DrivenRun, initialState, planOf } from '../../../support/decider.ts';

/** a → (group g: b, c) → d; d reads a's output by name, c reads nothing. */
const steps: (Partial<PlanStep> & { id: string })[] = [
  { id: 'a', input: { value: 1 } },
  { id: 'g', target: null },
  { id: 'b', parentId: 'g', dependsOn: ['a'], input: { value: '{% $outputs.a.value %}' } },
  { id: 'c', parentId: 'g', dependsOn: ['a'] },
  {
    id: 'd',
    dependsOn: ['g'],
    input: { sum: '{% $outputs.a.value + 1 %}' },
    metadata: { owner: 'ops' },
    watches: ['s3://bucket/key'],
    rollbackHint: 'undo by hand',
    estimatedDurationSeconds: 5,
  },
];
const plan = planOf(steps, { budget: { maxTokens: 1000 } });

const startsOf = (effects: readonly Effect[]) =>
  effects.flatMap((e) => (e.kind === 'startStep' ? [e.input as { stepId: string; brief: unknown }] : []));

describe('briefOf', () => {
  it('holds the definition less what only people and other services read, its upstream, bound outputs and budget', () => {
    const brief = briefOf(planView(plan), 'd');
    expect(brief).toEqual({
      revision: 1,
      step: { id: 'd', title: 'd', target: 'tool:t', dependsOn: ['g'], input: { sum: '{% $outputs.a.value + 1 %}' } },
      upstream: ['b', 'c'],
      outputs: ['a'],
      budget: { maxTokens: 1000 },
    });
    for (const field of BRIEF_LEFT_OUT) expect(brief?.step).not.toHaveProperty(field);
    expect(stepBriefSchema.parse(JSON.parse(JSON.stringify(brief)))).toEqual(brief);
  });

  it('binds no outputs for a step whose expressions bind none, and knows no step the revision lacks', () => {
    expect(briefOf(planView(plan), 'c')).toMatchObject({ upstream: ['a'], outputs: [] });
    expect(briefOf(planView(plan), 'missing')).toBeUndefined();
  });
});

describe('stepBrief', () => {
  it('sends a normal step’s brief in well under 4 KB', () => {
    const brief = stepBrief(planView(plan), 'd');
    expect(brief).not.toBeNull();
    expect(utf8Bytes(JSON.stringify(brief))).toBeLessThan(4096);
  });

  it('sends no brief when it would pass MAX_BRIEF_BYTES (the execution reads the plan)', () => {
    const big = planOf([{ id: 'x', input: { blob: 'x'.repeat(MAX_BRIEF_BYTES) } }]);
    expect(stepBrief(planView(big), 'x')).toBeNull();
    expect(stepBrief(undefined, 'x')).toBeNull();
  });
});

describe('the decider starts a step with its brief', () => {
  it('puts each started step’s brief in its execution’s input', () => {
    const decided = decide(initialState(), { kind: 'StartRun', plan, at: '2026-01-01T00:00:01.000Z' });
    expect(startsOf(decided.effects)).toEqual([
      { ...startsOf(decided.effects)[0], brief: briefOf(planView(plan), 'a') },
    ]);
  });

  it('briefs a dependent released by its upstream step from the revision it runs under', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan });
    const decided = decide(run.state, {
      kind: 'AttemptEnded',
      at: run.now(),
      stepId: 'a',
      generation: 1,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'ok',
    });
    const started = startsOf(decided.effects);
    expect(started.map((s) => s.stepId).sort()).toEqual(['b', 'c']);
    for (const input of started) expect(input.brief).toEqual(briefOf(planView(plan), input.stepId));
  });
});
