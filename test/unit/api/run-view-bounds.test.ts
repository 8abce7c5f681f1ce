/**
 * A run stored with more than its view can carry (written before messages were bounded where they are made): the
 * view leaves the oversized part out and says so, so GET /runs/{id} and GET /runs never pass Lambda's 6 MB answer.
 */
import { describe, expect, it } from 'vitest';
import { buildRunSummary, buildRunView, MAX_INLINE_EVIDENCE_CHARS, pageOfSteps } from '../../../shared/api/run-view.ts';
import { MAX_MESSAGE_CHARS } from '../../../shared/plan/bounded-text.ts';
import type { Plan, StepError } from '../../../shared/plan/schema.ts';
import type { RunRecord, StepRecord } from '../../../shared/ports/store.ts';

const AT = '2026-01-01T00:00:00.000Z';
const HUGE = 'm'.repeat(10_000_000);

const hugeError: StepError = {
  code: 'E_INPUT_EXPRESSION',
  message: `the input of boom cannot be evaluated: ${HUGE}`,
  retryable: false,
  details: { errors: Array.from({ length: 200_000 }, (_, i) => `/anomalies/${i} must be string`) },
};

const plan: Plan = {
  schemaVersion: 1,
  revision: 1,
  objective: 'old records',
  steps: ['boom', 'fine'].map((id) => ({
    id,
    title: id,
    target: 'tool:echo',
    dependsOn: [],
    inputSchema: {},
    outputSchema: {},
  })),
};

const terminal: NonNullable<RunRecord['terminal']> = {
  state: 'failed',
  reason: 'step_failed',
  evidence: { rootCauses: ['boom'], errors: { boom: hugeError }, counts: { failed: 1 }, summary: 'step failed' },
  at: AT,
};

const run: RunRecord = {
  runId: 'r1',
  status: 'failed',
  objective: 'old records',
  revision: 1,
  createdAt: AT,
  updatedAt: AT,
  replans: 0,
  terminal,
};

const record: StepRecord = {
  runId: 'r1',
  stepId: 'boom',
  status: 'failed',
  generation: 1,
  upstream: [],
  remaining: 0,
  released: [],
  attempts: 0,
  error: hugeError,
  trace: [],
  updatedAt: AT,
};

const small: StepError = { code: 'E_X', message: 'short', retryable: false, details: { errors: ['a'] } };
const fine: StepRecord = { ...record, stepId: 'fine', error: small };

describe('run views of a run stored with a 10 MB error', () => {
  it('bound the terminal evidence of GET /runs/{id} and mark it truncated, keeping its small fields', () => {
    const view = buildRunView(run, plan, [record]);

    expect(view.terminal).toMatchObject({ state: 'failed', reason: 'step_failed', evidenceTruncated: true });
    expect(view.terminal?.evidence).toMatchObject({
      rootCauses: ['boom'],
      counts: { failed: 1 },
      summary: 'step failed',
    });
    expect(JSON.stringify(view.terminal).length).toBeLessThan(MAX_INLINE_EVIDENCE_CHARS + 1024);
  });

  it("bound a step's error in a page of GET /runs/{id} and mark it truncated, leaving an ordinary one whole", () => {
    const [step, other] = pageOfSteps(buildRunView(run, plan, [record, fine]).steps, 0, 500).steps;

    expect(step).toMatchObject({ id: 'boom', errorTruncated: true, error: { code: 'E_INPUT_EXPRESSION' } });
    expect(step?.error?.message).toHaveLength(MAX_MESSAGE_CHARS);
    expect(JSON.stringify(step).length).toBeLessThan(8 * 1024);
    expect(other?.error).toEqual(small);
    expect(other).not.toHaveProperty('errorTruncated');
  });

  it('bound the summary GET /runs lists, so a page of 100 such runs stays far under 6 MB', () => {
    const summary = buildRunSummary(run, { [record.status]: 1 });

    expect(summary.terminal?.evidenceTruncated).toBe(true);
    expect(JSON.stringify(summary).length * 100).toBeLessThan(6 * 1024 * 1024);
  });
});
