/**
 * The step's path reads no plan: every step execution the decider starts carries its brief (engine/run/step-brief.ts),
 * and RunStep, driven here as the step machine drives it through a fan-out and a join, never asks the store for a
 * plan revision. Without a brief (an execution started before briefs) it reads the plan, as it used to.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS, createConformancePack } from '../../../shared/capabilities/conformance.ts';
import { planView } from '../../../shared/engine/run/state.ts';
import { type StepBrief, stepBrief } from '../../../shared/engine/run/step-brief.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import type { Store } from '../../../shared/ports/store.ts';
import type { RunStepRequest } from '../../../shared/services/coordinator-types.ts';
import { DONE_1, firstCall, step, useRunStepStore } from '../../support/run-step-harness.ts';

const { store, runner, seedRun, stepOf } = useRunStepStore();

const WIDTH = 12;

/** root → WIDTH steps reading its output → a join reading two of theirs. */
function fanAndJoin(): PlanStep[] {
  const middle = Array.from({ length: WIDTH }, (_, i) =>
    step(`m${i}`, CONFORMANCE_TARGETS.echo, { value: `{% $outputs.root.value & '-${i}' %}` }, ['root']),
  );
  return [
    step('root', CONFORMANCE_TARGETS.echo, { value: 'r' }),
    ...middle,
    step(
      'join',
      CONFORMANCE_TARGETS.echo,
      { value: '{% [$outputs.m0.value, $outputs.m1.value] %}' },
      middle.map((m) => m.id),
    ),
  ];
}

/** Counts the plan revisions RunStep asks the store for. */
function planReads() {
  const reads: (number | undefined)[] = [];
  const over: Partial<Store> = {
    getPlanRevision: (runId, revision) => {
      reads.push(revision);
      return store.getPlanRevision(runId, revision);
    },
  };
  return { reads, over };
}

/** Runs every step execution the decider starts, as the step machine would, with the input it was started with. */
async function drive(
  runStep: (request: RunStepRequest) => Promise<unknown>,
  starts: readonly { machine: string; name: string; input: Readonly<Record<string, unknown>> }[],
  first: RunStepRequest,
): Promise<number> {
  await runStep(first);
  let ran = 1;
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i];
    if (start?.machine !== 'step') continue;
    const { runId, stepId, generation, brief } = start.input as {
      runId: string;
      stepId: string;
      generation: number;
      brief: StepBrief | null;
    };
    expect(brief, `${stepId}'s start carries its brief`).not.toBeNull();
    const next = await runStep({
      runId,
      stepId,
      generation,
      executionId: `arn:test:execution:step:${start.name}`,
      previous: null,
      decision: null,
      brief,
    });
    expect(next, stepId).toEqual(DONE_1);
    ran += 1;
  }
  return ran;
}

describe('the step path reads no plan', () => {
  it('runs a fan-out and a join from their briefs without reading a plan revision', async () => {
    const steps = fanAndJoin();
    const runId = await seedRun(steps);
    const counted = planReads();
    const { runStep, executions } = runner(createConformancePack().bindings, { stepOver: counted.over });
    const view = planView({ schemaVersion: 1, revision: 1, objective: 'o', steps });

    const ran = await drive(runStep, executions.starts, {
      ...firstCall(runId, 'root'),
      brief: stepBrief(view, 'root'),
    });

    expect(ran).toBe(WIDTH + 2);
    expect(counted.reads).toEqual([]);
    expect(await stepOf(runId, 'join')).toMatchObject({
      status: 'succeeded',
      output: { value: ['r-0', 'r-1'] },
    });
  });

  it('reads the plan for an execution started without a brief', async () => {
    const runId = await seedRun([step('only', CONFORMANCE_TARGETS.echo, { value: 1 })]);
    const counted = planReads();
    const { runStep } = runner(createConformancePack().bindings, { stepOver: counted.over });

    expect(await runStep({ ...firstCall(runId, 'only'), brief: null })).toEqual(DONE_1);

    expect(counted.reads).toEqual([1]);
    expect(await stepOf(runId, 'only')).toMatchObject({ status: 'succeeded', output: { value: 1 } });
  });
});
