/**
 * The gated run the approval tests share: step G waits for a person (the conformance approver, a 120 s deadline)
 * and D echoes once G is approved. Helpers start it, wait until G waits, and read G's pending approval record.
 */
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import { type LocalStack, plan, type RunView, statusOf, step, waitForRun } from './local-stack.ts';

/** G, a gate; and D after it unless `dependent` is false (a run of the gate alone). */
export const gatedPlan = (stack: LocalStack, objective: string, options: { readonly dependent?: boolean } = {}) =>
  plan(objective, [
    step(stack, 'G', T.approver, { approval: { question: 'May G go ahead?', timeoutSeconds: 120 } }),
    ...(options.dependent === false ? [] : [step(stack, 'D', T.echo, { dependsOn: ['G'], input: { value: 'd' } })]),
  ]);

/** Polls until the run's step `stepId` (G unless told) waits for a person. */
export const untilAwaitingApproval = (stack: LocalStack, runId: string, stepId = 'G'): Promise<RunView> =>
  waitForRun(stack, runId, (run) => statusOf(run, stepId) === 'awaiting_approval');

/** The run's pending approval, read from the store: the test fails when there is none. */
export async function pendingApprovalRecord(stack: LocalStack, runId: string): Promise<ApprovalRecord> {
  const [approval] = await stack.store.listApprovals({ runId, status: 'pending' });
  if (!approval) throw new Error(`no pending approval in run ${runId}`);
  return approval;
}

/** Starts a gated run and waits until G waits for a person: the run id and G's pending approval. */
export async function waitingGate(
  stack: LocalStack,
  objective: string,
  options: { readonly dependent?: boolean } = {},
): Promise<{ runId: string; approval: ApprovalRecord }> {
  const runId = await stack.startRun({ plan: gatedPlan(stack, objective, options) });
  await untilAwaitingApproval(stack, runId);
  return { runId, approval: await pendingApprovalRecord(stack, runId) };
}
