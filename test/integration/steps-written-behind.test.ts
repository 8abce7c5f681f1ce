/**
 * StartRun writes the records of the steps that wait for something after it started the run's first steps
 * (shared/services/initial-steps.ts). While those writes are held back, whatever needs a missing record writes it:
 * a release, a failure blocking its downstream, a cancellation closing the open steps. Once the held writes land
 * (conditional puts: they find the records in place) nothing of the run is left pending.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { StepRecord } from '../../shared/ports/store.ts';
import { getRun, plan, type RunView, step, summary } from '../support/local-stack.ts';
import { type Hold, type StoreFaults, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

/** Holds StartRun's write of the records of the objective's steps that wait for something. */
const holdRecordsBehind = (store: StoreFaults, objective: string): Hold =>
  store.hold({
    method: 'putSteps',
    match: (call) =>
      call.runId === store.runIdFor(objective) && (call.args[0] as StepRecord[]).some((s) => s.remaining > 0),
  });

/** Polls the run (without waiting for the stack to settle: the held StartRun keeps it busy) until `until` holds. */
async function pollRun(runId: string, until: (run: RunView) => boolean): Promise<RunView> {
  const started = Date.now();
  for (;;) {
    const run = await getRun(stack, runId);
    if (until(run)) return run;
    if (Date.now() - started > 30_000) throw new Error(`run ${runId} never got there: ${summary(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const statuses = async (runId: string) =>
  new Map((await faults.raw().listSteps(runId)).map((s) => [s.stepId, s.status]));

/** Lets the held write go, waits for the stack to settle and reads the run and its records as they are then. */
async function afterRelease(hold: Hold, runId: string) {
  hold.release();
  await stack.settled();
  return { run: await getRun(stack, runId), records: await statuses(runId) };
}

describe('step records written behind the first steps', () => {
  it('releases a dependent whose record is not written yet, and the run completes', async () => {
    const objective = 'release before the record';
    const hold = holdRecordsBehind(faults, objective);
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
        step(stack, 'C', T.echo, { dependsOn: ['A', 'B'], input: { value: 'c' } }),
      ]),
    });
    await hold.arrived;

    const done = await pollRun(runId, (run) => run.status !== 'running' && run.status !== 'planning');
    const { run, records } = await afterRelease(hold, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(run.status).toBe('complete');
    expect([...records.entries()].sort()).toEqual([
      ['A', 'succeeded'],
      ['B', 'succeeded'],
      ['C', 'succeeded'],
    ]);
  }, 60_000);

  it('blocks the downstream of a failure whose records are not written yet', async () => {
    const objective = 'block before the records';
    const hold = holdRecordsBehind(faults, objective);
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.fail, { input: { message: 'no', retryable: false } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
        step(stack, 'C', T.echo, { dependsOn: ['B'], input: { value: 'c' } }),
      ]),
    });
    await hold.arrived;

    const done = await pollRun(runId, (run) => run.status === 'failed');
    const { run, records } = await afterRelease(hold, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(run.status).toBe('failed');
    expect([...records.entries()].sort()).toEqual([
      ['A', 'failed'],
      ['B', 'blocked'],
      ['C', 'blocked'],
    ]);
  }, 60_000);

  it('closes the steps a cancellation finds unwritten, so none is left pending in the cancelled run', async () => {
    const objective = 'cancel before the records';
    const hold = holdRecordsBehind(faults, objective);
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.sleep, { input: { ms: 400 } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      ]),
    });
    await hold.arrived;
    await pollRun(runId, (run) => run.steps.some((s) => s.id === 'A' && s.status === 'running'));

    const cancelled = await stack.request('POST', `/runs/${runId}/cancel`);
    const { run, records } = await afterRelease(hold, runId);

    expect(cancelled.status).toBe(200);
    expect(run.status).toBe('cancelled');
    expect([...records.entries()].sort()).toEqual([
      ['A', 'cancelled'],
      ['B', 'cancelled'],
    ]);
  }, 60_000);
});
