import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STEP_ID_PATTERN } from '../../../shared/plan/schema.ts';
import {
  EXECUTION_NAME_PATTERN,
  nameSafe,
  runExecutionName,
  stepExecutionName,
} from '../../../shared/ports/executions.ts';

const stepId = fc.stringMatching(STEP_ID_PATTERN);
const generation = fc.integer({ min: 1, max: 10_000 });
const runId = fc.uuid();

describe('stepExecutionName', () => {
  it('gives steps a.b and a_b of one generation different names', () => {
    expect(stepExecutionName('r1', 'a.b', 1)).not.toBe(stepExecutionName('r1', 'a_b', 1));
  });

  it('is deterministic and within the rules of Step Functions for any step id', () => {
    fc.assert(
      fc.property(runId, stepId, generation, (run, step, g) => {
        const name = stepExecutionName(run, step, g);
        expect(name).toMatch(EXECUTION_NAME_PATTERN);
        expect(stepExecutionName(run, step, g)).toBe(name);
      }),
      { numRuns: 500 },
    );
  });

  it('never gives two different steps or generations of a run the same name', () => {
    fc.assert(
      fc.property(runId, stepId, generation, stepId, generation, (run, a, ga, b, gb) => {
        fc.pre(a !== b || ga !== gb);
        expect(stepExecutionName(run, a, ga)).not.toBe(stepExecutionName(run, b, gb));
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart ids that differ only in . and _ (the characters that collided)', () => {
    const dotted = fc
      .array(fc.constantFrom('a', '.', '_', '-', '1'), { minLength: 1, maxLength: 63 })
      .map((chars) => `a${chars.join('')}`);
    fc.assert(
      fc.property(dotted, dotted, (a, b) => {
        fc.pre(a !== b);
        expect(stepExecutionName('run', a, 1)).not.toBe(stepExecutionName('run', b, 1));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('nameSafe', () => {
  it('is injective on any text, escapes included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        fc.pre(a !== b);
        expect(nameSafe(a)).not.toBe(nameSafe(b));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps letters, digits and hyphens as they are', () => {
    expect(nameSafe('3f2a-Run-9')).toBe('3f2a-Run-9');
    expect(nameSafe('a.b_c')).toBe('a_2eb_5fc');
  });
});

describe('runExecutionName', () => {
  it('keeps a run id of letters, digits and hyphens as it is', () => {
    fc.assert(
      fc.property(runId, (run) => {
        expect(runExecutionName(run)).toBe(`run-${run}`);
        expect(runExecutionName(`${run}-o2`)).toMatch(EXECUTION_NAME_PATTERN);
      }),
    );
  });
});
