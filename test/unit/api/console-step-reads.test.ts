/**
 * `GET /runs/{id}/steps/{stepId}` reads the step, not the run: its item, its attempts, its approvals and the part of
 * the audit log from its first recorded time, instead of every step, every approval in the index and the whole log.
 * Counted with a wrapper around the store; the answer stays what the whole-run reads gave.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import { approvalView } from '../../../shared/api/approvals.ts';
import { buildStepDetail } from '../../../shared/api/console/step-detail.ts';
import { firstRecordedTime } from '../../../shared/api/console/step-reads.ts';
import type { OutboxEntry } from '../../../shared/events/outbox.ts';
import type { Store } from '../../../shared/ports/store.ts';
import {
  approvalRecord,
  echoStep,
  gateStep,
  type Harness,
  harness,
  planOf,
  seedRun,
  stepRecord,
  TOKEN,
} from './harness.ts';

const steps = [
  echoStep('before'),
  gateStep('gate', { dependsOn: ['before'] }),
  ...Array.from({ length: 20 }, (_, i) => echoStep(`other${i}`, { dependsOn: ['before'] })),
];
const plan = planOf(steps);
const at = (second: number) => `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

const entry = (id: string, second: number, type: string, detail: Record<string, unknown>): OutboxEntry => ({
  id,
  runId: 'run-a',
  at: at(second),
  events: [{ type, detail: { runId: 'run-a', ...detail } }] as OutboxEntry['events'],
});

async function seeded(): Promise<Harness> {
  const h = await harness();
  await seedRun(h, 'run-a', plan, [
    stepRecord('run-a', 'before', { status: 'succeeded', output: { value: 'x' }, startedAt: at(1), finishedAt: at(2) }),
    stepRecord('run-a', 'gate', { status: 'awaiting_approval', attempts: 1, upstream: ['before'], startedAt: at(3) }),
    ...steps.slice(2).map((s) => stepRecord('run-a', s.id, { upstream: ['before'] })),
  ]);
  await h.store.putApproval(approvalRecord('run-a.gate.g1.approval.a1.1', { runId: 'run-a', stepId: 'gate' }));
  await h.store.putApproval(approvalRecord('run-a.other1.g1.approval.a1.1', { runId: 'run-a', stepId: 'other1' }));
  await h.store.putApproval(approvalRecord('run-b.gate.g1.approval.a1.1', { runId: 'run-b', stepId: 'gate' }));
  await h.store.recordEvents([
    entry('e0', 0, 'RunStarted', { objective: 'o', revision: 1, steps: steps.length }),
    entry('e1', 1, 'StepStarted', { stepId: 'before', generation: 1, target: 'tool:echo' }),
    entry('e2', 2, 'StepSucceeded', { stepId: 'before', generation: 1, attempts: 1 }),
    entry('e3', 3, 'StepStarted', { stepId: 'gate', generation: 1, target: 'human:approver' }),
    entry('e4', 4, 'ApprovalRequested', {
      stepId: 'gate',
      generation: 1,
      approvalId: 'run-a.gate.g1.approval.a1.1',
      kind: 'approval',
      deadline: at(59),
    }),
  ]);
  return h;
}

/** The store behind a counter of calls per method. */
function counted(store: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, calls };
}

async function getCounted(h: Harness, path: string) {
  const { store, calls } = counted(h.store);
  const app = createApp({ ...h.deps, store });
  const res = await app.request(path, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, calls };
}

/** The detail as the whole-run reads made it. */
async function wholeRunDetail(h: Harness, stepId: string) {
  const run = await h.store.getRun('run-a');
  if (!run) throw new Error('no run');
  const step = plan.steps.find((s) => s.id === stepId);
  if (!step) throw new Error('no step');
  const [records, attempts, approvals, events] = await Promise.all([
    h.store.listSteps('run-a'),
    h.store.listAttempts('run-a', stepId),
    h.store.listApprovals({ runId: 'run-a' }),
    h.store.listEvents('run-a'),
  ]);
  const detail = buildStepDetail({
    run,
    revision: 1,
    steps: plan.steps,
    step,
    records,
    attempts,
    approvals: approvals.map(approvalView),
    events,
  });
  return JSON.parse(JSON.stringify(detail)) as unknown;
}

describe('GET /runs/{id}/steps/{stepId} reads', () => {
  it('reads the step item, its attempts, its approvals and its events, never a list of the whole run', async () => {
    const h = await seeded();

    const { status, calls } = await getCounted(h, '/runs/run-a/steps/gate');

    expect(status).toBe(200);
    expect(Object.fromEntries(calls)).toEqual({
      // The tenant guard's read of the run, then the route's.
      getRun: 2,
      getPlanRevision: 1,
      getStep: 1,
      listAttempts: 1,
      listRunApprovals: 1,
      listEvents: 1,
    });
  });

  it('answers what the whole-run reads answered: the step, its approvals and its events only', async () => {
    const h = await seeded();

    for (const stepId of ['before', 'gate', 'other1', 'other2']) {
      const { body } = await getCounted(h, `/runs/run-a/steps/${stepId}`);
      expect(body, stepId).toEqual(await wholeRunDetail(h, stepId));
    }
    const gate = (await getCounted(h, '/runs/run-a/steps/gate')).body as {
      approvals: { approvalId: string }[];
      events: { type: string }[];
    };
    expect(gate.approvals.map((a) => a.approvalId)).toEqual(['run-a.gate.g1.approval.a1.1']);
    expect(gate.events.map((e) => e.type)).toEqual(['StepStarted', 'ApprovalRequested']);
  });

  it('reads no events for a step that never started or ended', async () => {
    const h = await seeded();

    const { body, calls } = await getCounted(h, '/runs/run-a/steps/other2');

    expect(body.events).toEqual([]);
    expect(calls.has('listEvents')).toBe(false);
  });
});

describe('firstRecordedTime', () => {
  it('takes the earliest time of any generation, and none for a step that never started or ended', () => {
    const history = [{ generation: 1, status: 'succeeded' as const, startedAt: at(1), finishedAt: at(2) }];
    const record = stepRecord('r', 's', { generation: 2, status: 'running', startedAt: at(9), history });
    expect(firstRecordedTime(record)).toBe(Date.parse(at(1)));
    expect(firstRecordedTime(stepRecord('r', 's'))).toBeUndefined();
    expect(firstRecordedTime(undefined)).toBeUndefined();
  });
});
