/**
 * Replanning through the embedded runtime: a final failure reaches the replanner over the in-process bus (the
 * deployed rule's pattern), which revises the plan within the failure's scope, keeps finished work, pauses the run at
 * the limit or when a replan made no progress, and answers a person's replan through the API.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { type AuditEvent, auditLog } from '../support/api-reads.ts';
import {
  getRun,
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';
import { createReplanPack, PROVIDER_DOWN_CODE, PROVIDERS, type ReplanPack } from '../support/replan-pack.ts';

const pack: ReplanPack = createReplanPack();
const outage = new Set<string>();
const stack = useTestStack({ demoOutage: outage, extraCapabilities: pack, limits: { maxReplans: 3 } });

beforeEach(() => outage.clear());

const start = (steps: PlanStep[], objective = 'replanning') => stack.startRun({ plan: plan(objective, steps) });
const provider = (id: string, fail: string[], fields: Partial<PlanStep> = {}) =>
  step(stack, id, PROVIDERS.primary, { input: { value: id, fail }, ...fields });
const settled = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

async function revisions(runId: string): Promise<{ revision: number; reason: string }[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/revisions`);
  return (json as { revisions: { revision: number; reason: string }[] }).revisions;
}

const events = async (runId: string, type: string): Promise<AuditEvent[]> =>
  (await auditLog(stack, runId)).filter((e) => e.type === type);

/** A person's replan through the API: the answer, then its planning job once the worker is done. */
async function replanJob(runId: string, reason: string) {
  const answer = await stack.request('POST', `/runs/${runId}/replan`, { reason });
  if (answer.status !== 202) return { status: answer.status, json: answer.json, job: undefined };
  await stack.settled();
  const { jobId } = answer.json as { jobId: string };
  const polled = await stack.request('GET', `/plans/${jobId}`);
  const job = polled.json as { status: string; revision?: number; error?: { code: string } };
  return { status: answer.status, json: answer.json, job };
}

async function planAt(runId: string, revision: number): Promise<PlanStep[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/plan?revision=${revision}`);
  return (json as { plan: { steps: PlanStep[] } }).plan.steps;
}

describe('replanning a failed step', () => {
  it('substitutes the catalog alternative and keeps what already finished', async () => {
    const runId = await start([
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      provider('B', ['primary'], { dependsOn: ['A'] }),
      step(stack, 'C', T.echo, { dependsOn: ['B'], input: { value: 'c' } }),
      step(stack, 'D', T.echo, { input: { value: 'd' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(done.revision).toBe(2);
    expect(stepOf(done, 'B')).toMatchObject({ status: 'succeeded', generation: 2, output: { provider: 'secondary' } });
    expect(stepOf(done, 'C')).toMatchObject({ status: 'succeeded', generation: 2 });
    for (const id of ['A', 'D']) expect(stepOf(done, id)).toMatchObject({ generation: 1, attempts: 1 });
    expect(stepOf(done, 'A').output).toEqual({ value: 'a' });
    expect((await events(runId, 'StepSucceeded')).filter((e) => e.stepId === 'A')).toHaveLength(1);
    const revised = (await planAt(runId, 2)).find((s) => s.id === 'B');
    expect(revised?.target).toBe(PROVIDERS.secondary);
    // The revision carries its own reasoning: the failure it answers and what it changed.
    const { json } = await stack.request('GET', `/runs/${runId}/plan?revision=2`);
    expect((json as { plan: { rationale?: string } }).plan.rationale).toMatch(
      new RegExp(`^HTN replan: step B \\(${PROVIDERS.primary}\\) failed with .*; substituted ${PROVIDERS.secondary}`),
    );
    const published = await events(runId, 'PlanRevised');
    expect(published.map((e) => e.detail.revision)).toEqual([2]);
  });

  it('replans with another method: the removed step is superseded, the finished ones keep their outputs', async () => {
    outage.add('tool:deploys.list');
    const runId = await stack.startRun({ objective: 'Triage the incident in checkout-api' });

    // A batch writes its steps before the run that points at them: the run's revision says the batch is all written.
    const moved = await waitForRun(stack, runId, (run) => {
      const diagnose = run.steps.find((s) => s.id === 'diagnose');
      return (
        settled(run) ||
        (run.revision >= 2 &&
          diagnose?.generation === 2 &&
          diagnose.status !== 'pending' &&
          diagnose.status !== 'ready')
      );
    });

    expect(moved.revision, summary(moved)).toBe(2);
    expect(moved.steps.map((s) => s.id)).not.toContain('evidence.deploys');
    for (const id of ['evidence.logs', 'evidence.metrics']) {
      expect(stepOf(moved, id)).toMatchObject({ status: 'succeeded', generation: 1, attempts: 1 });
      expect((await events(runId, 'StepSucceeded')).filter((e) => e.stepId === id)).toHaveLength(1);
    }
    expect(stepOf(moved, 'diagnose').generation).toBe(2);
    expect((await stack.store.getStep(runId, 'evidence.deploys'))?.status).toBe('superseded');
    const { status, json } = await stack.request('GET', `/runs/${runId}/plan/diff?from=1&to=2`);
    expect(status).toBe(200);
    const diff = (json as { diff: { superseded: { id: string }[]; changed: { id: string }[] } }).diff;
    expect(diff.superseded.map((s) => s.id)).toEqual(['evidence.deploys']);
    expect(diff.changed.map((s) => s.id)).toContain('diagnose');
    expect((await revisions(runId)).at(-1)?.reason).toMatch(/another method for evidence/);
    await stack.request('POST', `/runs/${runId}/cancel`);
  });

  it('fails the run naming the root cause when the planner has no alternative', async () => {
    const runId = await start([
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'B', T.fail, { dependsOn: ['A'], input: { message: 'planned permanent failure', retryable: false } }),
      step(stack, 'C', T.echo, { dependsOn: ['A'], input: { value: 'c' } }),
      step(stack, 'D', T.echo, { dependsOn: ['B', 'C'], input: { value: 'd' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect([statusOf(done, 'B'), statusOf(done, 'D'), statusOf(done, 'C')]).toEqual(['failed', 'blocked', 'succeeded']);
    expect(done.revision).toBe(1);
    expect(done.terminal?.evidence.rootCauses).toEqual(['B']);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'B', failure: 'B#1', code: 'E_NO_ALTERNATIVE' }),
    ]);
  });
});

describe('the replan budget', () => {
  it('pauses the run with the reason once the replan limit is reached, and refuses a manual replan', async () => {
    const runId = await start([
      provider('S1', ['primary']),
      provider('S2', ['primary'], { dependsOn: ['S1'] }),
      provider('S3', ['primary'], { dependsOn: ['S2'] }),
      provider('S4', ['primary'], { dependsOn: ['S3'] }),
    ]);

    const paused = await waitForRun(stack, runId, settled);

    expect(paused.status, summary(paused)).toBe('paused');
    expect(paused.terminal).toMatchObject({ state: 'paused', reason: 'max_replans' });
    expect(paused.terminal?.evidence).toMatchObject({ stepId: 'S4', replans: 3, maxReplans: 3 });
    expect(paused.revision).toBe(4);
    expect(statusOf(paused, 'S4')).toBe('failed');
    const refused = await stack.request('POST', `/runs/${runId}/replan`, { reason: 'one more try' });
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: { code: 'E_REPLAN_LIMIT' } });
    expect((refused.json as { error: { message: string } }).error.message).toMatch(/replan limit.*3 of 3/);
  });

  it('pauses the run when a replan leads to the same failure again', async () => {
    const runId = await start([provider('S', ['primary', 'secondary'])]);

    const paused = await waitForRun(stack, runId, settled);

    expect(paused.status, summary(paused)).toBe('paused');
    expect(paused.terminal).toMatchObject({ state: 'paused', reason: 'no_progress' });
    expect(paused.revision).toBe(2);
    expect(stepOf(paused, 'S')).toMatchObject({ status: 'failed', generation: 2 });
    expect(stepOf(paused, 'S').error?.code).toBe(PROVIDER_DOWN_CODE);
  });
});

describe('a person asks for a replan', () => {
  it('replans a paused run through the API: one of two concurrent requests makes the revision', async () => {
    const runId = await start([provider('S', ['primary', 'secondary'])]);
    await waitForRun(stack, runId, settled);

    const answers = await Promise.all([
      replanJob(runId, 'try the third provider'),
      replanJob(runId, 'try the third provider'),
    ]);

    const made = answers.filter((a) => a.job?.revision !== undefined);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ status: 202, job: { runId, status: 'succeeded', revision: 3 } });
    for (const other of answers.filter((a) => !made.includes(a))) expect([202, 409]).toContain(other.status);
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'S')).toMatchObject({ generation: 3, output: { provider: 'tertiary' } });
    expect((await revisions(runId)).map((r) => r.revision)).toEqual([1, 2, 3]);
    expect((await revisions(runId)).at(-1)?.reason).toMatch(/^manual replan \(try the third provider\)/);
    // Who asked is recorded with the revision, shown on the run and announced.
    const view = (await getRun(stack, runId)) as unknown as { actions?: { type: string; requestedBy: string }[] };
    expect(view.actions).toEqual([expect.objectContaining({ type: 'replan', requestedBy: 'local-token' })]);
    expect((await events(runId, 'PlanRevised')).at(-1)?.detail).toMatchObject({
      revision: 3,
      requestedBy: 'local-token',
    });
  });

  it('answers 404 for an unknown run and 400 without a reason; the HTN planner cannot act on a reason alone', async () => {
    expect((await stack.request('POST', '/runs/nope/replan', { reason: 'x' })).status).toBe(404);
    const runId = await start([step(stack, 'E', T.echo, { input: { value: 'e' } })]);
    expect((await stack.request('POST', `/runs/${runId}/replan`, {})).status).toBe(400);
    await waitForRun(stack, runId);
    const nothing = await replanJob(runId, 'why not');
    expect(nothing).toMatchObject({ status: 202, job: { status: 'failed', error: { code: 'E_NO_CHANGE' } } });
    expect(await getRun(stack, runId)).toMatchObject({ status: 'complete', revision: 1 });
  });
});

describe('delivery at least once', () => {
  it('makes one revision however often and in whatever order the StepFailed event arrives', async () => {
    const stepId = `dup-${Date.now()}`;
    const unsubscribe = stack.bus.subscribe(
      { 'detail-type': ['StepFailed'], detail: { stepId: [stepId] } },
      async (event) => {
        if (event.detail.duplicate === true) return;
        const copy = { detailType: 'StepFailed', detail: { ...event.detail, duplicate: true } };
        await Promise.all([stack.bus.publish([copy]), stack.bus.publish([copy])]);
      },
    );
    try {
      const runId = await start([provider(stepId, ['primary'])]);
      const done = await waitForRun(stack, runId);
      await stack.bus.drain();
      // A late and a reordered copy: the same failure again, after its answer.
      await stack.bus.publish([
        {
          detailType: 'StepFailed',
          detail: {
            runId,
            stepId,
            generation: 1,
            attempts: 1,
            error: { code: 'E', message: 'late' },
            final: true,
          },
        },
      ]);
      await stack.bus.drain();

      expect(done.status, summary(done)).toBe('complete');
      expect((await revisions(runId)).map((r) => r.revision)).toEqual([1, 2]);
      const after = await getRun(stack, runId);
      expect(after).toMatchObject({ status: 'complete', revision: 2 });
      expect((await stack.store.getRun(runId))?.replans).toBe(1);
    } finally {
      unsubscribe();
    }
  });
});

describe('the approval timeout policy', () => {
  const gate = (id: string, onTimeout?: 'fail' | 'pause') =>
    step(stack, id, T.approver, {
      input: { note: 'look at it' },
      approval: { question: `May ${id} go ahead?`, timeoutSeconds: 1, ...(onTimeout ? { onTimeout } : {}) },
    });

  it('pause: the step keeps waiting, the run is paused with the reason and the approval has expired', async () => {
    const runId = await start([
      gate('G', 'pause'),
      step(stack, 'After', T.echo, { dependsOn: ['G'], input: { value: 1 } }),
    ]);

    const paused = await waitForRun(stack, runId, (run) => run.terminal !== undefined, 20_000);

    expect(paused.status, summary(paused)).toBe('paused');
    expect(paused.terminal).toMatchObject({ state: 'paused', reason: 'approval_expired' });
    expect(paused.terminal?.evidence).toMatchObject({ stepId: 'G' });
    expect(statusOf(paused, 'G')).toBe('awaiting_approval');
    expect(statusOf(paused, 'After')).toBe('pending');
    const { json } = await stack.request('GET', `/approvals?runId=${runId}`);
    const approvals = (json as { approvals: { approvalId: string; status: string }[] }).approvals;
    expect(approvals.map((a) => a.status)).toEqual(['expired']);
    const late = await stack.request('POST', `/approvals/${approvals[0]?.approvalId}`, { decision: 'approve' });
    expect(late.status).toBe(410);
    // A person may replan the gate; with no alternative for a person, the planner says so and the run stays.
    const replan = await replanJob(runId, 'nobody answered');
    expect(replan).toMatchObject({ status: 202, job: { status: 'failed', error: { code: 'E_NO_ALTERNATIVE' } } });
    expect((await getRun(stack, runId)).status).toBe('paused');
  });

  it('fail (the default): the step fails, no replan is possible, the run fails', async () => {
    const runId = await start([gate('G'), step(stack, 'After', T.echo, { dependsOn: ['G'], input: { value: 1 } })]);

    const done = await waitForRun(stack, runId, undefined, 20_000);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'G').error?.code).toBe('E_APPROVAL_EXPIRED');
    expect(statusOf(done, 'After')).toBe('blocked');
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'G', code: 'E_NO_ALTERNATIVE' }),
    ]);
  });
});

describe('the demo', () => {
  it('moves the searches to the alternative provider during an outage and goes on to the review gate', async () => {
    outage.add('tool:web.search');
    const runId = await stack.startRun({ objective: 'Compile a competitor research report on Acme and Globex' });

    const paused = await waitForRun(stack, runId, (run) => statusOf(run, 'review') === 'awaiting_approval');

    const searches = paused.steps.filter((s) => s.id.endsWith('.search'));
    expect(searches.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(searches.map((s) => s.generation)).toEqual([2, 2]);
    const current = await planAt(runId, paused.revision);
    expect(current.filter((s) => s.id.endsWith('.search')).map((s) => s.target)).toEqual([
      'tool:web.search-backup',
      'tool:web.search-backup',
    ]);
    expect(paused.revision).toBe(3);
    expect((await events(runId, 'PlanRevised')).map((e) => e.detail.revision)).toEqual([2, 3]);
    await stack.request('POST', `/runs/${runId}/cancel`);
  });
});

describe('planning out of the request', () => {
  it('answers POST /plans DECOMPOSE with a job the planner handler finishes, and DIRECT with the plan at once', async () => {
    const asked = await stack.request('POST', '/plans', { objective: 'Triage the incident in checkout-api' });
    expect(asked).toMatchObject({ status: 202, json: { kind: 'plan', status: 'pending' } });
    await stack.settled();
    const { jobId } = asked.json as { jobId: string };
    const polled = await stack.request('GET', `/plans/${jobId}`);
    expect(polled).toMatchObject({ status: 200, json: { jobId, status: 'succeeded' } });
    const steps = (polled.json as { plan: { steps: { id: string }[] } }).plan.steps;
    expect(steps.map((s) => s.id)).toContain('diagnose');

    const direct = await stack.request('POST', '/plans', { objective: 'x', mode: 'DIRECT', directTarget: T.echo });
    expect(direct).toMatchObject({ status: 200, json: { plan: { steps: [{ target: T.echo }] } } });
  });
});
