/**
 * How often one plan is validated between `POST /runs` and the end of its run, through the embedded runtime (the
 * API, the run machine's PlanRun, ValidatePlan and StartRun, the steps). Every entry point of shared/plan/validate.ts
 * is counted, so a new validation anywhere on the path shows up here.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const counted = vi.hoisted(() => ({ validations: 0 }));

vi.mock('../../shared/plan/validate.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../shared/plan/validate.ts')>();
  const count =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      counted.validations += 1;
      return fn(...args);
    };
  return {
    ...actual,
    validate: count(actual.validate),
    validateGenerated: count(actual.validateGenerated),
    validateText: count(actual.validateText),
  };
});

const stack = useTestStack();

beforeEach(() => {
  counted.validations = 0;
});

describe('plan validations per run', () => {
  it('validates a submitted plan once: POST /runs stamps it, ValidatePlan and StartRun trust the stamp', async () => {
    const runId = await stack.startRun({
      plan: plan('validated how often', [
        step(stack, 'a', T.echo, { input: { value: 'a' } }),
        step(stack, 'b', T.echo, { dependsOn: ['a'], input: { value: 'b' } }),
      ]),
    });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(counted.validations).toBe(1);
  });

  it('validates a planned objective once: the planner stamps it, ValidatePlan and StartRun trust the stamp', async () => {
    const runId = await stack.startRun({
      objective: 'Find the runbook for checkout latency',
      directTarget: 'tool:kb.search',
    });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(counted.validations).toBe(1);
  });
});
