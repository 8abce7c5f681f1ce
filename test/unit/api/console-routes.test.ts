import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../../shared/ports/store.ts';
import { approvalRecord, echoStep, gateStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

const plan = planOf([echoStep('before', { estimatedDurationSeconds: 3 }), gateStep('gate', { dependsOn: ['before'] })]);

async function seeded() {
  const h = await harness();
  await seedRun(h, 'run-a', plan, [
    stepRecord('run-a', 'before', {
      status: 'succeeded',
      output: { value: 'x' },
      startedAt: '2030-01-01T00:00:01.000Z',
    }),
    stepRecord('run-a', 'gate', { status: 'awaiting_approval', attempts: 1, upstream: ['before'] }),
  ]);
  const attempts: AttemptRecord[] = [
    {
      runId: 'run-a',
      stepId: 'before',
      generation: 1,
      attempt: 1,
      target: 'tool:echo',
      startedAt: '2030-01-01T00:00:01.000Z',
      finishedAt: '2030-01-01T00:00:02.000Z',
      outcome: 'failed',
      error: { code: 'E_TIMEOUT', message: 'slow', retryable: true },
      evidence: { binding: 'builtin' },
    },
    {
      runId: 'run-a',
      stepId: 'before',
      generation: 1,
      attempt: 2,
      target: 'tool:echo',
      startedAt: '2030-01-01T00:00:03.000Z',
      finishedAt: '2030-01-01T00:00:04.000Z',
      outcome: 'succeeded',
      output: { value: 'x' },
      evidence: { binding: 'builtin' },
    },
  ];
  for (const attempt of attempts) await h.store.putAttempt(attempt);
  await h.store.putApproval(approvalRecord('ap1', { runId: 'run-a', stepId: 'gate' }));
  return h;
}

describe('GET /runs/{id}/steps/{stepId}', () => {
  it('answers the definition, the record, every attempt with its evidence and the generation history', async () => {
    const h = await seeded();

    const res = await h.request('GET', '/runs/run-a/steps/before');
    const body = (await res.json()) as Record<string, unknown>;

    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      kind: 'tool',
      status: 'succeeded',
      step: { id: 'before', target: 'tool:echo', estimatedDurationSeconds: 3 },
      record: { output: { value: 'x' } },
      generations: [{ generation: 1, attempts: 2, outcome: 'succeeded', current: true }],
    });
    expect(body.attempts).toMatchObject([
      { attempt: 1, outcome: 'failed', error: { code: 'E_TIMEOUT' }, evidence: { binding: 'builtin' } },
      { attempt: 2, outcome: 'succeeded' },
    ]);
  });

  it('lists the approvals of the step without their task tokens', async () => {
    const h = await seeded();

    const body = (await (await h.request('GET', '/runs/run-a/steps/gate')).json()) as { approvals: object[] };

    expect(body.approvals).toHaveLength(1);
    expect(body.approvals[0]).not.toHaveProperty('taskToken');
  });

  it('answers 404 for a step the plan does not have', async () => {
    const h = await seeded();

    expect((await h.request('GET', '/runs/run-a/steps/nope')).status).toBe(404);
  });
});

describe('revisions', () => {
  it('lists every revision with its reason and change counts, and diffs two of them', async () => {
    const h = await seeded();
    await h.store.putPlanRevision(
      'run-a',
      { ...planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] }), echoStep('after')]), revision: 2 },
      'replan: gate rejected',
    );

    const list = (await (await h.request('GET', '/runs/run-a/revisions')).json()) as { revisions: object[] };
    const diff = await (await h.request('GET', '/runs/run-a/revisions/2/diff')).json();

    expect(list.revisions).toMatchObject([
      { revision: 1, reason: 'initial plan', current: true, changes: { added: 2 } },
      { revision: 2, reason: 'replan: gate rejected', current: false, changes: { added: 1, changed: 1 } },
    ]);
    expect(diff).toMatchObject({
      from: 1,
      to: 2,
      reason: 'replan: gate rejected',
      diff: { added: [{ id: 'after' }], changed: [{ id: 'before', fields: ['estimatedDurationSeconds'] }] },
    });
  });

  it('answers 404 for a revision that does not exist and 400 for one that is not a number', async () => {
    const h = await seeded();

    expect((await h.request('GET', '/runs/run-a/revisions/9/diff')).status).toBe(404);
    expect((await h.request('GET', '/runs/run-a/revisions/x/diff')).status).toBe(400);
  });
});

describe('GET /runs/{id}/timeline', () => {
  it('answers rows with planned slots, attempts and approval waits', async () => {
    const h = await seeded();

    const body = (await (await h.request('GET', '/runs/run-a/timeline')).json()) as {
      rows: { id: string; attempts: unknown[]; waits: unknown[]; plannedStartSeconds: number }[];
    };

    expect(body.rows.map((r) => [r.id, r.plannedStartSeconds, r.attempts.length, r.waits.length])).toEqual([
      ['before', 0, 2, 0],
      ['gate', 3, 0, 1],
    ]);
  });
});

describe('POST /approvals/{id}/check', () => {
  it('says whether an edited output matches the step target outputSchema, and decides nothing', async () => {
    const h = await seeded();

    const bad = await (
      await h.request('POST', '/approvals/ap1/check', { body: { output: { approved: 'yes' } } })
    ).json();
    const good = await (
      await h.request('POST', '/approvals/ap1/check', { body: { output: { approved: true } } })
    ).json();

    expect(bad).toMatchObject({ valid: false, target: 'human:approver', status: 'pending' });
    expect((bad as { errors: string[] }).errors.join(' ')).toContain('approved');
    expect(good).toMatchObject({ valid: true, errors: [] });
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
    expect(h.executions.successes).toEqual([]);
  });

  it('answers 404 for an unknown approval and 400 without an output', async () => {
    const h = await seeded();

    expect((await h.request('POST', '/approvals/zz/check', { body: { output: {} } })).status).toBe(404);
    expect((await h.request('POST', '/approvals/ap1/check', { body: {} })).status).toBe(400);
  });
});

describe('console data routes and authentication', () => {
  it('refuses every data route without the bearer token', async () => {
    const h = await seeded();
    const paths = ['/runs/run-a/steps/before', '/runs/run-a/revisions', '/runs/run-a/timeline'];

    const statuses = await Promise.all(
      paths.map(async (p) => (await h.request('GET', p, { headers: { authorization: 'Bearer wrong' } })).status),
    );

    expect(statuses).toEqual([401, 401, 401]);
  });
});
