/**
 * What every RunLog adapter does (shared/ports/run-log.ts), as one suite run against each: the in-memory one and
 * the DynamoDB one on dynalite. A batch commits only at a version nobody took; projecting writes each image only
 * over an older copy (a repeat, or a slow writer behind a newer one, changes nothing); a step's execution-owned
 * output survives the decider's images until its generation moves on; revisions and their watches are written once.
 */
import { expect, it } from 'vitest';
import type { CommittedBatch, RecordImages, RunLog } from '../../shared/ports/run-log.ts';
import type { Store } from '../../shared/ports/store.ts';
import { anApproval, aPlan, aRun, aStep, at } from './store-fixtures.ts';

export type RunLogStore = Pick<
  Store,
  | 'createRun'
  | 'getRun'
  | 'getStep'
  | 'listSteps'
  | 'listRunApprovals'
  | 'getPlanRevision'
  | 'listWatchers'
  | 'transitionStep'
>;

export interface RunLogFixture {
  readonly runLog: RunLog;
  readonly store: RunLogStore;
}

const NO_IMAGES: RecordImages = { steps: [], moved: [], approvals: [], revisions: [] };

const batchOf = (runId: string, version: number, images: Partial<RecordImages> = {}): CommittedBatch => ({
  runId,
  version,
  at: at(version),
  events: [],
  images: { ...NO_IMAGES, ...images },
  effects: [],
  published: [],
  counts: {},
});

export function runLogBehaviour(setUp: () => Promise<RunLogFixture>): void {
  it('commits a batch only at a version nobody took, and ends with the last one', async () => {
    const { runLog, store } = await setUp();
    const run = aRun();
    await store.createRun(run);
    expect(await runLog.last(run.runId)).toBeUndefined();
    expect(await runLog.commit(batchOf(run.runId, 1))).toBe(true);
    expect(await runLog.commit({ ...batchOf(run.runId, 1), at: at(99) })).toBe(false);
    expect(await runLog.commit(batchOf(run.runId, 2))).toBe(true);
    expect(await runLog.last(run.runId)).toMatchObject({ runId: run.runId, version: 2, at: at(2) });
  });

  it('projects the records a batch changed, each only over a copy older than the batch', async () => {
    const { runLog, store } = await setUp();
    const run = aRun();
    await store.createRun(run);
    const step = aStep({ runId: run.runId, stepId: 'a' });
    const approval = anApproval({ runId: run.runId, stepId: 'a' });
    const newer = { runId: run.runId, version: 3 };
    await runLog.project(
      batchOf(newer.runId, newer.version, {
        run: { ...run, status: 'running', updatedAt: at(3) },
        steps: [{ ...step, status: 'running', attempts: 1 }],
        approvals: [{ ...approval, status: 'approved', decidedBy: 'ana' }],
      }),
    );
    // A slow writer of an older batch, and a repeat of the same one: neither changes anything.
    for (const version of [2, 3])
      await runLog.project(
        batchOf(run.runId, version, {
          run: { ...run, status: 'failed', updatedAt: at(2) },
          steps: [{ ...step, status: 'failed' }],
          approvals: [{ ...approval, status: 'rejected', decidedBy: 'bo' }],
        }),
      );
    expect(await store.getRun(run.runId)).toMatchObject({ status: 'running', updatedAt: at(3) });
    expect(await store.getStep(run.runId, 'a')).toMatchObject({ status: 'running', attempts: 1 });
    expect(await store.listRunApprovals(run.runId)).toMatchObject([{ status: 'approved', decidedBy: 'ana' }]);
    await runLog.project(batchOf(run.runId, 4, { steps: [{ ...step, status: 'succeeded' }] }));
    expect((await store.listSteps(run.runId)).map((s) => [s.stepId, s.status])).toEqual([['a', 'succeeded']]);
  });

  it("keeps a step's output, written by its execution, until its generation moves on", async () => {
    const { runLog, store } = await setUp();
    const run = aRun();
    await store.createRun(run);
    const step = aStep({ runId: run.runId, stepId: 'a', status: 'running' });
    await runLog.project(batchOf(run.runId, 1, { steps: [step] }));
    await store.transitionStep(run.runId, 'a', { generation: 1, from: ['running'] }, { output: { value: 42 } });
    await runLog.project(batchOf(run.runId, 2, { steps: [{ ...step, status: 'succeeded' }] }));
    expect(await store.getStep(run.runId, 'a')).toMatchObject({ status: 'succeeded', output: { value: 42 } });
    await runLog.project(
      batchOf(run.runId, 3, { steps: [{ ...step, generation: 2, status: 'pending' }], moved: ['a'] }),
    );
    const moved = await store.getStep(run.runId, 'a');
    expect(moved).toMatchObject({ generation: 2, status: 'pending' });
    expect(moved?.output).toBeUndefined();
  });

  it('writes a revision and its watches once, and takes a repeat of it as done', async () => {
    const { runLog, store } = await setUp();
    const run = aRun();
    await store.createRun(run);
    const plan = aPlan({ steps: [{ id: 'a', title: 'A', target: 'tool:t', dependsOn: [], watches: ['doc:1'] }] });
    const images = { ...NO_IMAGES, revisions: [{ plan, reason: 'initial plan' }] };
    await runLog.project(batchOf(run.runId, 1, images));
    await runLog.project(batchOf(run.runId, 1, images));
    expect((await store.getPlanRevision(run.runId, 1))?.plan.steps.map((s) => s.id)).toEqual(['a']);
    expect(await store.listWatchers('default', 'doc:1')).toContainEqual({ runId: run.runId, stepId: 'a' });
  });
}
