import { describe, expect, it } from 'vitest';
import type { RunView, StepView } from '../../../shared/api/run-view.ts';
import { counter, finalLine, transitions, watchRun } from '../../../shared/api/watch.ts';

const step = (id: string, fields: Partial<StepView> = {}): StepView => ({
  id,
  title: id,
  target: 'tool:echo',
  parentId: null,
  dependsOn: [],
  status: 'pending',
  generation: 1,
  attempts: 0,
  output: null,
  error: null,
  confidence: null,
  startedAt: null,
  finishedAt: null,
  trace: [],
  ...fields,
});

const view = (status: RunView['status'], steps: StepView[], extra: Partial<RunView> = {}): RunView => ({
  runId: 'r',
  status,
  objective: 'obj',
  revision: 1,
  steps,
  ...extra,
});

describe('counter', () => {
  it('counts finished executable steps of the current plan only', () => {
    const run = view('running', [
      step('g', { target: null, status: 'succeeded' }),
      step('a', { status: 'succeeded' }),
      step('b', { status: 'blocked' }),
      step('c', { status: 'running' }),
      step('old', { status: 'superseded' }),
    ]);
    expect(counter(run)).toEqual({ done: 2, total: 3 });
  });
});

describe('transitions', () => {
  it('reports moved steps on the first snapshot and only changes afterwards', () => {
    const first = view('running', [step('a', { status: 'running', attempts: 1 }), step('b')]);
    expect(transitions(undefined, first)).toEqual(['[0/2] … a running (tool:echo)']);
    const second = view('running', [
      step('a', { status: 'retrying', attempts: 1, error: { code: 'E_T', message: 'flaky' } }),
      step('b'),
    ]);
    expect(transitions(first, second)).toEqual(['[0/2] ↻ a retrying after attempt 1: E_T flaky']);
    expect(transitions(second, second)).toEqual([]);
    const third = view('running', [step('a', { status: 'running', attempts: 2 }), step('b')]);
    expect(transitions(second, third)).toEqual(['[0/2] … a running (tool:echo, attempt 2)']);
  });

  it('reports a new generation even when the status is the same', () => {
    const before = view('running', [step('a', { status: 'succeeded' })]);
    const after = view('running', [step('a', { status: 'succeeded', generation: 2 })]);
    expect(transitions(before, after)).toEqual(['[1/1] ✓ a succeeded']);
  });

  it('leaves groups out', () => {
    expect(transitions(undefined, view('running', [step('g', { target: null, status: 'running' })]))).toEqual([]);
  });
});

describe('finalLine', () => {
  it('names the failed steps and the reason', () => {
    const run = view('failed', [step('a', { status: 'failed' }), step('b', { status: 'blocked' })], {
      terminal: { state: 'failed', reason: '1 step failed', evidence: {} },
    });
    expect(finalLine(run)).toBe('run r failed (2/2 steps done): 1 step failed [failed: a]');
  });

  it('points a paused run at the approvals', () => {
    expect(finalLine(view('paused', [step('g', { status: 'awaiting_approval' })]))).toContain(
      'waiting for a person at g',
    );
  });
});

describe('watchRun', () => {
  /** Snapshots read in turn; the feed hands out seq `e<n>` on each wait and records how it was asked. */
  const scripted = (snapshots: RunView[]) => {
    let i = 0;
    const waits: { after: string | undefined; waitSeconds: number }[] = [];
    return {
      polls: () => i,
      waits,
      client: {
        getRun: async () => snapshots[Math.min(i++, snapshots.length - 1)] as RunView,
        nextEvents: async (_runId: string, after: string | undefined, waitSeconds: number) => {
          waits.push({ after, waitSeconds });
          return `e${waits.length}`;
        },
      },
    };
  };
  const noSleep = async () => {};

  it('stops at a terminal status and prints the final line', async () => {
    const { client, polls } = scripted([
      view('planning', [], { revision: 0 }),
      view('running', [step('a', { status: 'running' })]),
      view('complete', [step('a', { status: 'succeeded' })]),
      view('complete', [step('a', { status: 'succeeded' })]),
    ]);
    const lines: string[] = [];
    const run = await watchRun(client, 'r', { write: (l) => lines.push(l), sleep: noSleep });
    expect(run.status).toBe('complete');
    expect(polls()).toBe(3);
    expect(lines).toEqual([
      'run r: obj',
      'run r planning',
      'run r running (plan revision 1)',
      '[0/1] … a running (tool:echo)',
      '[1/1] ✓ a succeeded',
      'run r complete (1/1 steps done)',
    ]);
  });

  it('waits on the feed between reads of the run, from where the log stood before the first read', async () => {
    const { client, waits } = scripted([
      view('running', [step('a', { status: 'running' })]),
      view('paused', [step('a', { status: 'awaiting_approval' })]),
      view('complete', [step('a', { status: 'succeeded' })]),
    ]);
    await watchRun(client, 'r', { write: () => {}, sleep: noSleep });
    expect(waits).toEqual([
      { after: undefined, waitSeconds: 0 },
      { after: 'e1', waitSeconds: 20 },
      { after: 'e2', waitSeconds: 1 },
    ]);
  });

  it('stops at paused only once it has settled', async () => {
    const waiting = [step('a', { status: 'succeeded' }), step('g', { status: 'awaiting_approval' }), step('b')];
    const { client, polls } = scripted([
      view('paused', waiting),
      view('running', [...waiting.slice(0, 2), step('b', { status: 'running' })]),
      view('paused', [...waiting.slice(0, 2), step('b', { status: 'succeeded' })]),
      view('paused', [...waiting.slice(0, 2), step('b', { status: 'succeeded' })]),
    ]);
    const run = await watchRun(client, 'r', { write: () => {}, sleep: noSleep });
    expect(run.status).toBe('paused');
    expect(polls()).toBe(4);
  });
});
