import { describe, expect, it } from 'vitest';
import { runRequestHash } from '../../../shared/api/runs.ts';
import { isStamped } from '../../../shared/plan/stamp.ts';
import { runExecutionName } from '../../../shared/ports/executions.ts';
import { echoStep, gateStep, harness, planOf, runRecord, scriptedMailbox, seedRun, stepRecord } from './harness.ts';

type Json = Record<string, unknown>;

describe('POST /runs', () => {
  it('stores a run from an objective and starts the run machine', async () => {
    const h = await harness();
    const res = await h.request('POST', '/runs', { body: { objective: 'say hi', directTarget: 'tool:echo' } });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { runId: string; status: string };
    expect(body).toEqual({ runId: 'run-1', status: 'planning' });
    expect(await h.store.getRun('run-1')).toMatchObject({
      status: 'planning',
      objective: 'say hi',
      mode: 'DIRECT',
      directTarget: 'tool:echo',
      revision: 0,
      replans: 0,
    });
    expect(h.executions.starts).toEqual([
      { machine: 'run', name: runExecutionName('run-1'), input: { runId: 'run-1' }, started: true },
    ]);
  });

  it('stores a submitted plan as SUBMITTED with the plan objective', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a'), echoStep('b', { dependsOn: ['a'] })], 'submitted objective');
    const res = await h.request('POST', '/runs', { body: { plan } });
    expect(res.status).toBe(202);
    const run = await h.store.getRun('run-1');
    expect(run).toMatchObject({ mode: 'SUBMITTED', objective: 'submitted objective', status: 'planning' });
    expect(run?.submittedPlan).toEqual(plan);
  });

  it('stores a submitted plan with the stamp of its validation against this catalog and these limits', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a'), echoStep('b', { dependsOn: ['a'] })], 'submitted objective');
    expect((await h.request('POST', '/runs', { body: { plan } })).status).toBe(202);
    const run = await h.store.getRun('run-1');
    expect(isStamped(run?.planStamp, run?.submittedPlan, h.deps.catalog, h.deps.limits)).toBe(true);
    expect(
      await h.request('POST', '/runs', { body: { objective: 'say hi', directTarget: 'tool:echo' } }),
    ).toMatchObject({
      status: 202,
    });
    expect((await h.store.getRun('run-2'))?.planStamp).toBeUndefined();
  });

  it('refuses an invalid submitted plan with 422 and stores and starts nothing', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a', { dependsOn: ['a'], status: 'succeeded' })]);
    const res = await h.request('POST', '/runs', { body: { plan }, headers: { 'idempotency-key': 'k-bad' } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string }; valid: boolean; errors: { code: string }[] };
    expect(body.error.code).toBe('E_INVALID_PLAN');
    expect(body.valid).toBe(false);
    expect(body.errors.map((e) => e.code)).toEqual(expect.arrayContaining(['E_SELF_DEPENDENCY', 'E_NOT_PENDING']));
    expect(await h.storedKeys()).toEqual([]);
    expect(h.executions.starts).toEqual([]);
  });

  it('refuses a plan over the step limit with the limit code', async () => {
    const h = await harness({ limits: { maxSteps: 2, maxDepth: 4 } });
    const res = await h.request('POST', '/runs', {
      body: { plan: planOf([echoStep('a'), echoStep('b'), echoStep('c')]) },
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: { code: string }[] }).errors.map((e) => e.code)).toContain(
      'E_TOO_MANY_STEPS',
    );
    expect(await h.storedKeys()).toEqual([]);
  });

  it('returns the same run for the same Idempotency-Key and starts one execution', async () => {
    const h = await harness();
    const send = () =>
      h.request('POST', '/runs', {
        body: { objective: 'once', directTarget: 'tool:echo' },
        headers: { 'idempotency-key': 'k1' },
      });
    const [a, b] = await Promise.all([send(), send()]);
    const c = await send();
    const ids = await Promise.all([a, b, c].map(async (r) => ((await r.json()) as { runId: string }).runId));
    expect([a.status, b.status, c.status]).toEqual([202, 202, 202]);
    expect(new Set(ids).size).toBe(1);
    expect(await h.store.listRuns()).toHaveLength(1);
    expect(h.executions.startedNames()).toEqual([runExecutionName(ids[0] ?? '')]);
  });

  it('does not touch a key owner that has left planning', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('run-old', { status: 'complete' }));
    await h.store.claimRunKey(
      'default',
      'k2',
      'run-old',
      runRequestHash({ objective: 'x', directTarget: 'tool:echo' }),
    );
    const res = await h.request('POST', '/runs', {
      body: { objective: 'x', directTarget: 'tool:echo' },
      headers: { 'idempotency-key': 'k2' },
    });
    expect(await res.json()).toEqual({ runId: 'run-old', status: 'complete' });
    expect(h.executions.starts).toEqual([]);
  });

  it('finishes the work of a key owner that died before storing its run', async () => {
    const h = await harness();
    await h.store.claimRunKey(
      'default',
      'k3',
      'run-lost',
      runRequestHash({ objective: 'x', directTarget: 'tool:echo' }),
    );
    const res = await h.request('POST', '/runs', {
      body: { objective: 'x', directTarget: 'tool:echo' },
      headers: { 'idempotency-key': 'k3' },
    });
    expect(await res.json()).toEqual({ runId: 'run-lost', status: 'planning' });
    expect((await h.store.getRun('run-lost'))?.status).toBe('planning');
    expect(h.executions.startedNames()).toEqual([runExecutionName('run-lost')]);
  });

  it('refuses a request the planner could never plan with 422 and stores nothing', async () => {
    const h = await harness();
    const noTarget = await h.request('POST', '/runs', { body: { objective: 'x', mode: 'DIRECT' } });
    const unknown = await h.request('POST', '/runs', { body: { objective: 'x', directTarget: 'tool:nope' } });
    const both = await h.request('POST', '/runs', {
      body: { objective: 'x', mode: 'DECOMPOSE', directTarget: 'tool:echo' },
    });
    expect([noTarget.status, unknown.status, both.status]).toEqual([422, 422, 422]);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('E_UNKNOWN_TARGET');
    expect(((await noTarget.json()) as { error: { code: string } }).error.code).toBe('E_MODE');
    expect(await h.storedKeys()).toEqual([]);
    expect(h.executions.starts).toEqual([]);
  });

  it('answers 400 for a bad body or a bad key', async () => {
    const h = await harness();
    const bad = await h.request('POST', '/runs', { body: { objective: 'x', plan: {} } });
    const noObjective = await h.request('POST', '/runs', { body: { mode: 'DIRECT' } });
    const badKey = await h.request('POST', '/runs', {
      body: { objective: 'x' },
      headers: { 'idempotency-key': 'a b' },
    });
    expect([bad.status, noObjective.status, badKey.status]).toEqual([400, 400, 400]);
    expect(await h.storedKeys()).toEqual([]);
  });
});

describe('GET /runs/{runId}', () => {
  it('answers 404 JSON for an unknown run', async () => {
    const h = await harness();
    const res = await h.request('GET', '/runs/does-not-exist');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_NOT_FOUND');
  });

  it('shows a planning run with no steps', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('r1', { status: 'planning', revision: 0 }));
    const body = (await (await h.request('GET', '/runs/r1')).json()) as Json;
    expect(body).toEqual({
      runId: 'r1',
      status: 'planning',
      objective: 'objective of r1',
      revision: 0,
      steps: [],
      usage: { tokens: 0, costUsd: 0 },
    });
  });

  it('joins the plan and the step records in plan order, groups derived', async () => {
    const h = await harness();
    const plan = planOf([
      { id: 'grp', title: 'Group', target: null, dependsOn: [] },
      echoStep('b', { parentId: 'grp', dependsOn: ['a'] }),
      echoStep('a', { parentId: 'grp' }),
      echoStep('c', { dependsOn: ['grp'] }),
    ]);
    await seedRun(h, 'r2', plan, [
      stepRecord('r2', 'a', {
        status: 'succeeded',
        attempts: 2,
        output: { value: 'a' },
        confidence: 0.9,
        startedAt: '2030-01-01T00:00:01.000Z',
        finishedAt: '2030-01-01T00:00:02.000Z',
        trace: [{ kind: 'exec', at: '2030-01-01T00:00:02.000Z', text: 'ok' }],
        usageTokens: 12,
        usageCostUsd: 0.5,
      }),
      stepRecord('r2', 'b', {
        status: 'failed',
        attempts: 1,
        error: { code: 'E_X', message: 'boom', retryable: false },
      }),
      stepRecord('r2', 'c', { status: 'blocked' }),
    ]);
    const res = await h.request('GET', '/runs/r2');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { steps: Json[]; revision: number };
    expect(body.revision).toBe(1);
    expect(body.steps.map((s) => [s.id, s.status])).toEqual([
      ['grp', 'failed'],
      ['b', 'failed'],
      ['a', 'succeeded'],
      ['c', 'blocked'],
    ]);
    expect(body.steps[0]).toMatchObject({ target: null, parentId: null, generation: null, attempts: 0 });
    expect(body.steps[2]).toEqual({
      id: 'a',
      title: 'Step a',
      target: 'tool:echo',
      parentId: 'grp',
      dependsOn: [],
      status: 'succeeded',
      generation: 1,
      attempts: 2,
      output: { value: 'a' },
      error: null,
      confidence: 0.9,
      startedAt: '2030-01-01T00:00:01.000Z',
      finishedAt: '2030-01-01T00:00:02.000Z',
      trace: [{ kind: 'exec', at: '2030-01-01T00:00:02.000Z', text: 'ok' }],
      usage: { tokens: 12, costUsd: 0.5 },
    });
    expect(body.steps[0]).toMatchObject({ usage: null });
    expect(body.steps[1]).toMatchObject({ error: { code: 'E_X', message: 'boom', retryable: false }, attempts: 1 });
  });

  it('derives paused when nothing runs and a step awaits a person', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a'), gateStep('g', { dependsOn: ['a'] }), echoStep('z')]);
    for (const [runId, z] of [
      ['r3', 'running'],
      ['r3b', 'succeeded'],
    ] as const)
      await seedRun(h, runId, plan, [
        stepRecord(runId, 'a', { status: 'succeeded' }),
        stepRecord(runId, 'g', { status: 'awaiting_approval' }),
        stepRecord(runId, 'z', { status: z }),
      ]);
    expect(((await (await h.request('GET', '/runs/r3')).json()) as Json).status).toBe('running');
    expect(((await (await h.request('GET', '/runs/r3b')).json()) as Json).status).toBe('paused');
  });

  it('includes the terminal record', async () => {
    const h = await harness();
    await seedRun(h, 'r4', planOf([echoStep('a')]), [stepRecord('r4', 'a', { status: 'failed' })], {
      status: 'failed',
      terminal: {
        state: 'failed',
        reason: 'step failed',
        evidence: { rootCauses: ['a'] },
        at: '2030-01-01T00:01:00.000Z',
      },
    });
    const body = (await (await h.request('GET', '/runs/r4')).json()) as Json;
    expect(body.terminal).toEqual({ state: 'failed', reason: 'step failed', evidence: { rootCauses: ['a'] } });
  });
});

describe('GET /runs', () => {
  it('lists runs newest first with progress', async () => {
    const h = await harness();
    await seedRun(
      h,
      'old',
      planOf([echoStep('a'), echoStep('b')]),
      [stepRecord('old', 'a', { status: 'succeeded' }), stepRecord('old', 'b', { status: 'running' })],
      { createdAt: '2030-01-01T00:00:00.000Z' },
    );
    await h.store.createRun(
      runRecord('new', { status: 'planning', revision: 0, createdAt: '2030-01-02T00:00:00.000Z' }),
    );
    const body = (await (await h.request('GET', '/runs')).json()) as { runs: Json[] };
    expect(body.runs.map((r) => r.runId)).toEqual(['new', 'old']);
    expect(body.runs[1]).toMatchObject({ status: 'running', progress: { done: 1, total: 2 }, revision: 1 });
    expect(body.runs[0]).toMatchObject({ status: 'planning', progress: { done: 0, total: 0 } });
  });

  it('filters by status, paused derived, and honours limit', async () => {
    const h = await harness();
    await seedRun(h, 'p', planOf([gateStep('g')]), [stepRecord('p', 'g', { status: 'awaiting_approval' })]);
    await seedRun(h, 'r', planOf([echoStep('a')]), [stepRecord('r', 'a', { status: 'running' })]);
    await h.store.createRun(runRecord('c', { status: 'complete' }));
    const ids = async (q: string) =>
      ((await (await h.request('GET', `/runs${q}`)).json()) as { runs: Json[] }).runs.map((r) => r.runId).sort();
    expect(await ids('?status=paused')).toEqual(['p']);
    expect(await ids('?status=running')).toEqual(['r']);
    expect(await ids('?status=complete')).toEqual(['c']);
    expect(await ids('?limit=1')).toHaveLength(1);
  });

  it('answers 400 for a bad query', async () => {
    const h = await harness();
    expect((await h.request('GET', '/runs?status=nope')).status).toBe(400);
    expect((await h.request('GET', '/runs?limit=0')).status).toBe(400);
    expect((await h.request('GET', '/runs?limit=abc')).status).toBe(400);
  });
});

describe('GET /runs/{runId}/plan and /events', () => {
  it('returns the current revision or the one asked for', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a')]);
    await seedRun(h, 'r', plan, [], { revision: 2 });
    await h.store.putPlanRevision('r', { ...plan, revision: 2, steps: [echoStep('b')] }, 'replanned');
    const current = (await (await h.request('GET', '/runs/r/plan')).json()) as Json;
    expect(current).toMatchObject({ revision: 2, reason: 'replanned' });
    const first = (await (await h.request('GET', '/runs/r/plan?revision=1')).json()) as Json;
    expect(first).toEqual({ plan, revision: 1, reason: 'initial plan' });
    expect((await h.request('GET', '/runs/r/plan?revision=3')).status).toBe(404);
    expect((await h.request('GET', '/runs/r/plan?revision=x')).status).toBe(400);
    expect((await h.request('GET', '/runs/nope/plan')).status).toBe(404);
  });

  it('answers 404 for the plan of a run still planning', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('r', { status: 'planning', revision: 0 }));
    expect((await h.request('GET', '/runs/r/plan')).status).toBe(404);
  });

  it('lists the events in order', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('r'));
    await h.store.recordEvents([
      { id: 'e1', runId: 'r', at: '2030-01-01T00:00:01.000Z', events: [{ type: 'RunStarted', detail: {} }] },
      { id: 'e0', runId: 'other', at: '2030-01-01T00:00:00.000Z', events: [{ type: 'RunStarted', detail: {} }] },
      {
        id: 'e2',
        runId: 'r',
        at: '2030-01-01T00:00:02.000Z',
        events: [{ type: 'StepStarted', detail: { stepId: 'a' } }],
      },
    ]);
    const body = (await (await h.request('GET', '/runs/r/events')).json()) as { events: Json[] };
    expect(body.events.map((e) => e.type)).toEqual(['RunStarted', 'StepStarted']);
    const later = (await (await h.request('GET', `/runs/r/events?after=${body.events[0]?.seq}`)).json()) as {
      events: Json[];
    };
    expect(later.events.map((e) => e.type)).toEqual(['StepStarted']);
    expect((await h.request('GET', '/runs/nope/events')).status).toBe(404);
  });

  it('reads after a seq as long as the store gives out (announcement ids are UUIDs)', async () => {
    const h = await harness();
    await h.store.createRun(runRecord('r'));
    const id = (n: number) => `0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a${n}`;
    await h.store.recordEvents([
      { id: id(1), runId: 'r', at: '2030-01-01T00:00:01.000Z', events: [{ type: 'RunStarted', detail: {} }] },
      { id: id(2), runId: 'r', at: '2030-01-01T00:00:02.000Z', events: [{ type: 'RunFinished', detail: {} }] },
    ]);
    const first = (await (await h.request('GET', '/runs/r/events?limit=1')).json()) as {
      events: Json[];
      nextCursor: string;
    };
    expect(first.nextCursor.length).toBeGreaterThan(64);

    const after = await h.request('GET', `/runs/r/events?after=${first.nextCursor}`);
    const cursor = await h.request('GET', `/runs/r/events?cursor=${first.nextCursor}`);

    expect(after.status).toBe(200);
    expect(((await after.json()) as { events: Json[] }).events.map((e) => e.type)).toEqual(['RunFinished']);
    expect(cursor.status).toBe(200);
  });
});

describe('POST /runs/{runId}/cancel', () => {
  it("cancels through the run's decider and is idempotent", async () => {
    const h = await harness();
    await h.store.createRun(runRecord('r'));
    const first = await h.request('POST', '/runs/r/cancel');
    const second = await h.request('POST', '/runs/r/cancel');
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ runId: 'r', status: 'cancelled' });
    expect(await second.json()).toEqual({ runId: 'r', status: 'cancelled' });
    expect(await h.store.getRun('r')).toMatchObject({ status: 'cancelled', terminal: { state: 'cancelled' } });
  });

  it('answers 404 for an unknown run without asking its decider', async () => {
    const script = scriptedMailbox(() => ({ ok: true }));
    const h = await harness({ mailbox: script.mailbox });
    expect((await h.request('POST', '/runs/nope/cancel')).status).toBe(404);
    expect(script.asked).toEqual([]);
  });
});
