/**
 * A step's `budget.maxSeconds` must mean on AWS what it means embedded: the executor abandons an attempt at the limit
 * inside one RunStep invocation, so the synthesized StepExecutor Lambda and the RunStep Task must outlast the longest
 * limit the validator accepts, with the margin RunStep keeps to record the attempt and fail the step.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type AslDefinition, extractStateMachines } from '../../infra/local/synth.ts';
import {
  MAX_STEP_BUDGET_SECONDS,
  STEP_EXECUTOR_MARGIN_SECONDS,
  STEP_EXECUTOR_TIMEOUT_SECONDS,
} from '../../shared/config/defaults.ts';
import { synthStack } from './synth-stack.ts';

let lambdaTimeout: number;
let step: AslDefinition;

beforeAll(() => {
  const json = synthStack().template.toJSON() as Parameters<typeof extractStateMachines>[0];
  const machines = extractStateMachines(json);
  step = machines.step;
  const resources = (json as { Resources: Record<string, { Type: string; Properties?: { Timeout?: number } }> })
    .Resources;
  const [, fn] =
    Object.entries(resources).find(
      ([id, r]) => r.Type === 'AWS::Lambda::Function' && machines.functionOf(id) === 'StepExecutor',
    ) ?? [];
  lambdaTimeout = fn?.Properties?.Timeout ?? Number.NaN;
});

describe('the deployed step path and step time budgets', () => {
  it("gives the StepExecutor Lambda the timeout the step budget's bound is derived from", () => {
    expect(lambdaTimeout).toBe(STEP_EXECUTOR_TIMEOUT_SECONDS);
    expect(MAX_STEP_BUDGET_SECONDS + STEP_EXECUTOR_MARGIN_SECONDS).toBeLessThanOrEqual(lambdaTimeout);
  });

  it('lets the RunStep Task outlast its Lambda, so the executor, not the Task, ends an attempt at its limit', () => {
    const timeout = step.States.RunStep?.TimeoutSeconds;
    expect(timeout).toEqual(expect.any(Number));
    expect(timeout).toBeGreaterThan(lambdaTimeout);
  });
});
