import { describe, expect, it } from 'vitest';
import { effectsOf } from '../../../../shared/engine/run/effects.ts';
import type { RunEvent } from '../../../../shared/engine/run/events.ts';
import { draftOf } from '../../../../shared/engine/run/state.ts';
import { DrivenRun, planOf } from '../../../support/decider.ts';

/** A gate and a tool step, both started (running). */
function started(): DrivenRun {
  const run = new DrivenRun();
  run.apply({
    kind: 'StartRun',
    plan: planOf([
      { id: 'gate', target: 'human:approve', approval: { question: 'Go?', timeoutSeconds: 60 } },
      { id: 'tool', target: 'tool:t' },
    ]),
  });
  expect([run.status('gate'), run.status('tool')]).toEqual(['running', 'running']);
  return run;
}

const moved = (stepId: string): RunEvent =>
  ({ type: 'StepMoved', at: '2030-01-01T00:00:00.000Z', stepId, generation: 2, trace: [] }) as unknown as RunEvent;

describe("effectsOf: a person's wait closed with its generation", () => {
  it('closes the attempt a running gate may have recorded already when its generation moves on', () => {
    const effects = effectsOf(draftOf(started().state), moved('gate'));
    expect(effects.map((e) => e.kind)).toEqual(['stopStep', 'closeAttempt']);
    expect(effects[1]).toMatchObject({ stepId: 'gate', generation: 1, attempt: 1, ending: { kind: 'invalidated' } });
  });

  it('closes no attempt of a running tool step: its execution records its attempt as it ends', () => {
    const effects = effectsOf(draftOf(started().state), moved('tool'));
    expect(effects.map((e) => e.kind)).toEqual(['stopStep']);
  });
});
