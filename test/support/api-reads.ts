/**
 * Reads of a test stack through its API that integration tests share: the run's audit log, and the pending approval
 * a gate or a review opened (polled: the approval is written by the step's execution, a moment after the run starts).
 */
import type { LocalStack } from './local-stack.ts';

/** An approval as GET /approvals lists it. */
export interface ApprovalView {
  readonly approvalId: string;
  readonly runId: string;
  readonly stepId: string;
  readonly kind: string;
  readonly status: string;
  readonly question: string;
  readonly deadline: string;
  /** The decider's comment, or why the approval closed without one. */
  readonly comment?: string;
}

/** An entry of a run's audit log as GET /runs/{id}/events gives it. */
export interface AuditEvent {
  readonly type: string;
  readonly stepId?: string;
  readonly detail: Record<string, unknown>;
}

/** The run's audit log, oldest first. */
export async function auditLog<T extends AuditEvent = AuditEvent>(stack: LocalStack, runId: string): Promise<T[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/events`);
  return (json as { events: T[] }).events;
}

/** The run's pending approval (of `stepId`, when given); fails after about 10 s without one. */
export async function pendingApproval(stack: LocalStack, runId: string, stepId?: string): Promise<ApprovalView> {
  for (let i = 0; i < 400; i++) {
    const { json } = await stack.request('GET', `/approvals?status=pending&runId=${runId}`);
    const { approvals } = json as { approvals: ApprovalView[] };
    const found = stepId === undefined ? approvals[0] : approvals.find((a) => a.stepId === stepId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no pending approval for ${runId}${stepId === undefined ? '' : `/${stepId}`}`);
}

/** A person's decision on an approval, through the API. */
export const decide = (stack: LocalStack, approval: Pick<ApprovalView, 'approvalId'>, body: Record<string, unknown>) =>
  stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, body);

/** The run's revision numbers, oldest first. */
export async function revisions(stack: LocalStack, runId: string): Promise<number[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/revisions`);
  return (json as { revisions: { revision: number }[] }).revisions.map((r) => r.revision);
}

/** A request over a stack's socket with someone's own bearer token (a tokens file's person), its JSON answer. */
export async function requestAs(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}
