/**
 * cairn under AWS's limits, on the embedded stack that enforces them (infra/local/aws-limits.ts): what is large is
 * kept out of the 256 KB Step Functions payloads and the 400 KB items, so a plan with large outputs still runs, and
 * what cannot fit is refused before anything is recorded rather than failing an execution that nothing catches.
 */
import { describe, expect, it } from 'vitest';
import { AWS_LIMITS, jsonBytes } from '../../infra/local/aws-limits.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { nameSafe } from '../../shared/ports/executions.ts';
import { auditLog, decide, pendingApproval } from '../support/api-reads.ts';
import {
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';

const failures: string[] = [];

const stack = useTestStack(() => {
  const base = settingsFromEnv(process.env);
  return {
    // Outputs up to 1 MB: the store keeps them out of line, Step Functions never carries them.
    settings: { ...base, capabilities: { ...base.capabilities, maxOutputBytes: 1_000_000 } },
    onExecutionError: (message) => failures.push(message),
  };
});

const failedExecutions = (runId: string) =>
  stack.executions.list().filter((e) => e.status === 'FAILED' && e.name.includes(nameSafe(runId)));

describe('large step outputs', () => {
  it('completes a plan whose step returns 300 KB and whose dependent takes it as input', async () => {
    const big = 'b'.repeat(300 * 1024);
    const runId = await stack.startRun({
      plan: plan('big output', [
        step(stack, 'produce', T.echo, { input: { value: big } }),
        step(stack, 'consume', T.echo, { dependsOn: ['produce'], input: { value: '{% $outputs.produce.value %}' } }),
      ]),
    });
    const done = await waitForRun(stack, runId);

    expect(done.status, `${summary(done)} ${JSON.stringify(stepOf(done, 'consume').error)}`).toBe('complete');
    const consume = await stack.request('GET', `/runs/${runId}/steps/consume`);
    expect(JSON.stringify(consume.json)).toContain(big);
    expect(failedExecutions(runId)).toEqual([]);
  }, 60_000);
});

describe('a decision that cannot fit the waiting step execution', () => {
  const settled = (run: RunView) =>
    statusOf(run, 'gate') !== 'awaiting_approval' && ['complete', 'failed', 'cancelled'].includes(run.status);

  it('refuses an edit that fits SendTaskSuccess but not the state it lands in, before recording it', async () => {
    const runId = await stack.startRun({
      plan: plan('edit near the limit', [
        step(stack, 'gate', T.approver, { input: {}, approval: { question: 'Ship it?', timeoutSeconds: 300 } }),
      ]),
    });
    const approval = await pendingApproval(stack, runId);
    const reply = { decision: 'edit', output: { approved: true, comment: '' }, by: 'api-token' };
    const comment = 'c'.repeat(AWS_LIMITS.statePayloadBytes - jsonBytes(reply) - 100);

    // Under 256 KB as a token's answer: on AWS the step execution would then fail with States.DataLimitExceeded
    // (RunStep's payload and AwaitDecision's output carry it beside the rest of the state), which nothing catches.
    const answer = await decide(stack, approval, {
      decision: 'edit',
      output: { approved: true, comment },
    });
    expect(answer.status).toBe(413);
    expect((answer.json as { error: { code: string } }).error.code).toBe('E_TOO_LARGE');

    const again = await decide(stack, approval, {
      decision: 'edit',
      output: { approved: true, comment: 'c'.repeat(100 * 1024) },
    });
    expect(again.status).toBe(200);
    const done = await waitForRun(stack, runId, settled);
    expect(done.status, summary(done)).toBe('complete');
    expect(failedExecutions(runId)).toEqual([]);
  }, 60_000);
});

describe("EventBridge's PutEvents limit on the embedded bus", () => {
  it('refuses an event over 256 KB alone with a coded error naming it, as the deployed publisher does', async () => {
    const publish = stack.bus.publish([{ detailType: 'StepStarted', detail: { pad: 'x'.repeat(256 * 1024) } }]);
    await expect(publish).rejects.toMatchObject({
      name: 'EventTooLargeError',
      context: { code: 'E_EVENT_TOO_LARGE', events: [{ detailType: 'StepStarted' }] },
    });
  });

  it('publishes every event of a run whose outputs, failure message and objective are large', async () => {
    // Outputs travel by reference (the store), a failure's message is clipped, an objective is at most 4,000
    // characters: none of them makes an event EventBridge would refuse, so the audit log has them all.
    const runId = await stack.startRun({
      plan: plan('é'.repeat(3000), [
        step(stack, 'produce', T.echo, { input: { value: 'b'.repeat(300 * 1024) } }),
        step(stack, 'refuse', T.fail, {
          dependsOn: ['produce'],
          input: { message: 'm'.repeat(300 * 1024), retryable: false },
        }),
      ]),
    });
    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect((await auditLog(stack, runId)).map((e) => `${e.type}${e.stepId ? `:${e.stepId}` : ''}`)).toEqual(
      expect.arrayContaining(['RunStarted', 'StepSucceeded:produce', 'StepFailed:refuse', 'RunFinished']),
    );
  }, 60_000);
});
