/**
 * The OpenAPI document tells the truth: real answers of the embedded stack, for a run that waits at a gate, is
 * approved and completes, checked against the schemas the document gives for them.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { pendingApproval } from '../support/api-reads.ts';
import { plan, statusOf, step, useTestStack, waitForRun } from '../support/local-stack.ts';
import { contractProblems } from '../support/openapi-check.ts';

const stack = useTestStack();

describe('answers of the embedded stack', () => {
  it('match the schemas of the OpenAPI document', async () => {
    const problems: string[] = [];
    const check = async (operationId: string, method: string, path: string, body?: unknown) => {
      const answer = await stack.request(method, path, body);
      problems.push(...contractProblems(operationId, answer.status, answer.json));
      return answer.json as Record<string, unknown>;
    };
    const gated = plan('openapi', [
      step(stack, 'before', T.echo, { input: { value: 'before' } }),
      step(stack, 'gate', T.approver, {
        dependsOn: ['before'],
        input: {},
        approval: { question: 'Ship it?', timeoutSeconds: 300 },
      }),
      step(stack, 'after', T.echo, { dependsOn: ['gate'], input: { value: 'after' } }),
    ]);

    const { runId } = (await check('createRun', 'POST', '/runs', { plan: gated })) as { runId: string };
    const approval = await pendingApproval(stack, runId, 'gate');
    await waitForRun(stack, runId, (run) => statusOf(run, 'gate') === 'awaiting_approval');
    await check('getRun', 'GET', `/runs/${runId}`);
    await check('listApprovals', 'GET', `/approvals?runId=${runId}`);
    await check('getApproval', 'GET', `/approvals/${approval.approvalId}`);
    await check('checkApprovalOutput', 'POST', `/approvals/${approval.approvalId}/check`, { output: { x: 1 } });
    await check('decideApproval', 'POST', `/approvals/${approval.approvalId}`, { decision: 'approve' });
    await waitForRun(stack, runId);

    await check('getRun', 'GET', `/runs/${runId}`);
    await check('listRuns', 'GET', '/runs?limit=5');
    await check('getRunPlan', 'GET', `/runs/${runId}/plan`);
    await check('listRunEvents', 'GET', `/runs/${runId}/events`);
    await check('getStep', 'GET', `/runs/${runId}/steps/gate`);
    await check('getStep', 'GET', `/runs/${runId}/steps/after`);
    await check('listRevisions', 'GET', `/runs/${runId}/revisions`);
    await check('getRevisionDiff', 'GET', `/runs/${runId}/revisions/1/diff`);
    await check('getTimeline', 'GET', `/runs/${runId}/timeline`);
    await check('invalidateStep', 'POST', `/runs/${runId}/steps/after/invalidate`, { reason: 'changed' });
    await check('cancelRun', 'POST', `/runs/${runId}/cancel`);
    await check('createPlan', 'POST', '/plans', { objective: 'x', directTarget: T.echo });
    await check('validatePlan', 'POST', '/plans/validate', { plan: gated });
    await check('validatePlan', 'POST', '/plans/validate', { plan: { ...gated, steps: [] } });
    await check('getRun', 'GET', '/runs/no-such-run');
    await check('health', 'GET', '/health');
    await check('conformanceLedger', 'GET', '/conformance/ledger');

    expect(problems).toEqual([]);
  });
});
