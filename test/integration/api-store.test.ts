/**
 * The API against the real DynamoDB store (dynalite): the conditional writes that make idempotency keys and
 * approval decisions safe under concurrency, not a fake's imitation of them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { createApp } from '../../shared/api/app.ts';
import type { ApiDeps } from '../../shared/api/deps.ts';
import { runExecutionName, stepExecutionName } from '../../shared/ports/executions.ts';
import type { Store } from '../../shared/ports/store.ts';
import { decidingFor } from '../support/deciding.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
import { RecordedExecutions } from '../support/recorded-executions.ts';
import {
  approvalRecord,
  catalog,
  echoStep,
  fakePlanner,
  gateStep,
  planOf,
  SETTINGS,
  stepRecord,
  TOKEN,
} from '../unit/api/harness.ts';

let dynamo: TestDynamo;
let store: Store;
let executions: RecordedExecutions;
let now: Date;
let request: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>;

beforeEach(async () => {
  dynamo = await startDynalite();
  store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  executions = new RecordedExecutions();
  now = new Date('2030-01-01T00:00:00.000Z');
  let ids = 0;
  const deps: ApiDeps = {
    store,
    executions,
    catalog,
    planner: fakePlanner,
    limits: { maxSteps: 8, maxDepth: 4 },
    mailbox: decidingFor({ store, runLog: createDynamoRunLogOf(dynamo, store), executions, catalog, clock: () => now })
      .mailbox,
    runSettings: SETTINGS,
    auth: { kind: 'token', token: TOKEN },
    clock: () => now,
    newId: () => `run-${++ids}`,
  };
  const app = createApp(deps);
  request = async (method, path, body, headers = {}) =>
    app.request(path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
});

afterEach(async () => {
  await Promise.all([dynamo.stop(), executions.sfn.stop()]);
});

describe('the API on the DynamoDB store', () => {
  it('creates one run for concurrent requests with the same Idempotency-Key', async () => {
    const plan = planOf([echoStep('a')]);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => request('POST', '/runs', { plan }, { 'idempotency-key': 'same-key' })),
    );
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as { runId: string }[];
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const ids = new Set(bodies.map((b) => b.runId));
    expect(ids.size).toBe(1);
    const [runId] = [...ids];
    expect(await store.listRuns()).toHaveLength(1);
    expect(executions.startedNames()).toEqual([runExecutionName(runId ?? '')]);
    const view = (await (await request('GET', `/runs/${runId}`)).json()) as { status: string; steps: unknown[] };
    expect(view).toMatchObject({ status: 'planning', steps: [] });
  });

  it('refuses concurrent requests that reuse a key with other bodies, and answers the one with the same body', async () => {
    const plans = [planOf([echoStep('a')], 'first'), planOf([echoStep('a')], 'second'), planOf([echoStep('b')])];
    const answers = await Promise.all(
      plans.map((plan) => request('POST', '/runs', { plan }, { 'idempotency-key': 'shared-key' })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(2);
    const winner = plans[statuses.indexOf(202)];
    const { runId } = (await (answers[statuses.indexOf(202)] as Response).json()) as { runId: string };
    const codes = await Promise.all(
      answers
        .filter((r) => r.status === 422)
        .map(async (r) => ((await r.json()) as { error: { code: string } }).error.code),
    );
    expect(codes).toEqual(['E_IDEMPOTENCY_MISMATCH', 'E_IDEMPOTENCY_MISMATCH']);
    expect(await store.listRuns()).toHaveLength(1);
    const again = await request('POST', '/runs', { plan: winner }, { 'idempotency-key': 'shared-key' });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { runId: string }).runId).toBe(runId);
    // The winner is still planning, so the same request starts its machine again: the same name, started once.
    expect(executions.startedNames()).toHaveLength(1);
  });

  it('stores nothing for an invalid submitted plan', async () => {
    const res = await request(
      'POST',
      '/runs',
      { plan: planOf([echoStep('a', { dependsOn: ['ghost'] })]) },
      { 'idempotency-key': 'k' },
    );
    expect(res.status).toBe(422);
    expect(await store.listRuns()).toEqual([]);
    expect(executions.starts).toEqual([]);
  });

  /** A running run whose gate waits for a person on its execution's token, with its pending approval. */
  async function waitingGate(approvalId: string): Promise<void> {
    await store.createRun({
      runId: 'run-a',
      status: 'running',
      objective: 'gate',
      revision: 1,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      replans: 0,
    });
    await store.putPlanRevision('run-a', planOf([gateStep('gate')]), 'initial plan');
    await store.putSteps([stepRecord('run-a', 'gate', { status: 'awaiting_approval' })]);
    const taskToken = await executions.waitingToken(stepExecutionName('run-a', 'gate', 1));
    await store.putApproval(approvalRecord(approvalId, { taskToken }));
  }

  it('lets exactly one of many concurrent decisions win; its own repeats are answered as it was', async () => {
    await waitingGate('ap1');
    const decisions = ['approve', 'reject', 'approve', 'edit', 'reject', 'approve'];
    const answers = await Promise.all(
      decisions.map(async (decision) => {
        const res = await request('POST', '/approvals/ap1', {
          decision,
          ...(decision === 'edit' ? { output: { approved: true } } : {}),
        });
        return { decision, status: res.status, json: (await res.json()) as Record<string, unknown> };
      }),
    );
    // The run's decider takes them one at a time: the first decides; the same decision by the same person is that
    // decision's repeat (a request whose answer was lost looks the same) and is answered 200, any other is 409 with
    // the decision that won. The step is answered once.
    const recorded = await store.getApproval('ap1');
    const won = { approved: 'approve', rejected: 'reject', edited: 'edit' }[String(recorded?.status)];
    expect(won, `approval status ${recorded?.status}`).toBeDefined();
    for (const answer of answers) {
      if (answer.decision === won) {
        expect(answer.status, JSON.stringify(answer.json)).toBe(200);
        expect(answer.json).toMatchObject({ approval: { approvalId: 'ap1', status: recorded?.status } });
      } else {
        expect(answer.status, JSON.stringify(answer.json)).toBe(409);
        expect(answer.json).toMatchObject({
          error: { code: 'E_ALREADY_DECIDED', details: { decision: { decision: won } } },
        });
      }
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(decisions.filter((d) => d === won).length);
    expect(executions.successes).toHaveLength(1);
    expect(executions.successes[0]?.output).toMatchObject({ decision: won });
    const pending = (await (await request('GET', '/approvals?status=pending')).json()) as { approvals: unknown[] };
    expect(pending.approvals).toEqual([]);
  });

  it('expires an approval past its deadline with 410', async () => {
    await waitingGate('ap2');
    now = new Date('2030-01-01T00:10:00.000Z');
    const res = await request('POST', '/approvals/ap2', { decision: 'approve' });
    expect(res.status).toBe(410);
    expect((await store.getApproval('ap2'))?.status).toBe('expired');
    expect(executions.successes).toEqual([]);
  });
});
