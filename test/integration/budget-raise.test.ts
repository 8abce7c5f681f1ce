/**
 * A person's say over a paused run's limits through the HTTP API (`POST /runs/{id}/budget`), on the embedded stack
 * with a tokens file: a run paused for its budget goes on and completes once an operator raises it; a run paused at
 * its replan limit gets the replanner's next revision once the limit is raised (woken by BudgetRaised on the bus);
 * each refusal answers its code, and a viewer may not raise anything.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { auditLog } from '../support/api-reads.ts';
import { plan, type RunView, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';

const PEOPLE = {
  ana: { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator'] },
  vic: { token: 'vic-token-0123456789', subject: 'vic', roles: ['viewer'] },
};
type Who = keyof typeof PEOPLE;

const tokensFile = join(mkdtempSync(join(tmpdir(), 'cairn-budget-raise-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(Object.values(PEOPLE)));

const stack = useTestStack(() => ({
  settings: settingsFromEnv({ CAIRN_TOKENS_FILE: tokensFile }),
  extraCapabilities: createReplanPack(),
  limits: { maxReplans: 1 },
}));

async function call(who: Who, method: string, path: string, body?: unknown) {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${PEOPLE[who].token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const raise = (who: Who, runId: string, body: unknown) => call(who, 'POST', `/runs/${runId}/budget`, body);
const codeOf = (json: Record<string, unknown>) => (json.error as { code?: string } | undefined)?.code;
const held = (run: RunView) => run.terminal !== undefined;

interface AuditedRun extends RunView {
  budget?: Record<string, number>;
  maxReplans?: number;
  actions?: { type: string; requestedBy: string | null; detail?: string }[];
}

/** Starts a plan as ana and waits for it to stop (paused, or ended). */
async function startHeld(steps: PlanStep[], budget?: Record<string, unknown>): Promise<string> {
  const started = await call('ana', 'POST', '/runs', {
    plan: { ...plan('raise me', steps), ...(budget && { budget }) },
  });
  expect(started.status).toBe(202);
  return started.json.runId as string;
}

describe('POST /runs/{id}/budget', { timeout: 180_000 }, () => {
  it('raises the budget of a run paused budget_exhausted, refusing what does not let it go on, and it completes', async () => {
    const runId = await startHeld(
      [
        step(stack, 'first', T.spend, { input: { tokens: 0, costUsd: 2 } }),
        step(stack, 'second', T.echo, { dependsOn: ['first'], input: { value: 'later' } }),
      ],
      { maxCostUsd: 1, onExhausted: 'pause' },
    );
    const paused = await waitForRun(stack, runId, held);
    expect(paused.terminal, summary(paused)).toMatchObject({ state: 'paused', reason: 'budget_exhausted' });

    const viewer = await raise('vic', runId, { maxCostUsd: 5 });
    expect(viewer.status).toBe(403);
    expect(codeOf(viewer.json)).toBe('E_FORBIDDEN');
    for (const [body, code] of [
      [{ maxCostUsd: 1 }, 'E_LIMIT_NOT_RAISED'],
      [{ maxTokens: 100 }, 'E_LIMIT_NOT_RAISED'],
      [{}, 'E_LIMIT_NOT_RAISED'],
      [{ maxCostUsd: 1.5 }, 'E_STILL_OVER_LIMIT'],
    ] as const) {
      const refused = await raise('ana', runId, body);
      expect([refused.status, codeOf(refused.json)], JSON.stringify(body)).toEqual([422, code]);
    }
    const malformed = await raise('ana', runId, { maxCostUsd: 'lots' });
    expect([malformed.status, codeOf(malformed.json)]).toEqual([400, 'E_BAD_REQUEST']);

    const raised = await raise('ana', runId, { maxCostUsd: 5 });
    expect(raised.status).toBe(200);
    expect(raised.json).toEqual({ runId, status: 'running', limits: { maxCostUsd: 5, maxReplans: 1 } });

    const done = (await waitForRun(stack, runId)) as AuditedRun;
    expect(done.status, summary(done)).toBe('complete');
    expect(done.budget).toMatchObject({ maxCostUsd: 5 });
    expect(done.actions).toEqual([expect.objectContaining({ type: 'budget', requestedBy: 'ana' })]);
    const announced = (await auditLog(stack, runId)).filter((e) => e.type === 'BudgetRaised');
    expect(announced.map((e) => e.detail)).toEqual([
      { runId, limits: { maxCostUsd: 5 }, previous: { maxCostUsd: 1 }, requestedBy: 'ana' },
    ]);

    const finished = await raise('ana', runId, { maxCostUsd: 10 });
    expect([finished.status, codeOf(finished.json)]).toEqual([409, 'E_NOT_HELD_FOR_LIMIT']);
    expect((finished.json.error as { message: string }).message).toContain('is complete');
    const unknown = await raise('ana', '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1', { maxCostUsd: 10 });
    expect(unknown.status).toBe(404);
  });

  it('raises the replan limit of a run paused max_replans: the replanner revises again and the run completes', async () => {
    const provider = (id: string, fields: Partial<PlanStep> = {}) =>
      step(stack, id, PROVIDERS.primary, { input: { value: id, fail: ['primary'] }, ...fields });
    const runId = await startHeld([provider('S1'), provider('S2', { dependsOn: ['S1'] })]);
    const paused = await waitForRun(stack, runId, held);
    expect(paused.terminal, summary(paused)).toMatchObject({ state: 'paused', reason: 'max_replans' });
    expect(paused.revision).toBe(2);

    const raised = await raise('ana', runId, { maxReplans: 2 });
    expect(raised.status).toBe(200);

    const done = (await waitForRun(stack, runId)) as AuditedRun;
    expect(done.status, summary(done)).toBe('complete');
    expect(done.revision).toBe(3);
    expect(done.maxReplans).toBe(2);
    expect(done.actions).toEqual([
      expect.objectContaining({ type: 'budget', requestedBy: 'ana', detail: 'maxReplans 1 → 2' }),
    ]);
  });
});
