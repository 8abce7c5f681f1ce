/**
 * Human approvals: list, read, decide. A decision goes to the run's decider, which takes exactly one and answers
 * every request with what really happened (engine/run/rules/approvals.ts). Task tokens never leave the server. Who
 * may decide (the gate's approvers, no self-approval) is checked before the decision is sent, and the list holds only
 * what the caller may decide (approval-rules.ts).
 */
import { Hono } from 'hono';
import type { z } from 'zod';
import type { ApprovalRecord, Store } from '../ports/store.ts';
import { approvalContextReader, checkMayDecide, decidableBy, stepOfApproval } from './approval-rules.ts';
import { decisionBody, readJson, readQuery } from './body.ts';
import { serve } from './contract/route.ts';
import { decideApproval, getApproval, listApprovals } from './contract/routes/approvals.ts';
import { listApprovalsQuery, MAX_APPROVAL_PAGE } from './contract/schemas/requests.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError, notFound } from './errors.ts';

export type Decision = z.infer<typeof decisionBody>;

/** Step Functions' limit on a task token's output (SendTaskSuccess), which carries the decision to the step. */
export const MAX_TASK_OUTPUT_BYTES = 256 * 1024;
/**
 * The largest decision a waiting step can take. The answer lands at `$.decision` of the step execution's state and
 * travels in RunStep's payload beside the rest of it (ids, its last answer, an executor error and the failure made
 * of it, whose Causes Step Functions keeps up to 32 KB each), and every state payload has the same 256 KB limit; a
 * decision that fits the token but not the state fails the execution with States.DataLimitExceeded, which nothing
 * catches, after the decision was recorded. So the rest of the state keeps this much room.
 */
export const MAX_DECISION_BYTES = MAX_TASK_OUTPUT_BYTES - 96 * 1024;

export type ApprovalView = Omit<ApprovalRecord, 'taskToken'>;

/** What the waiting step is answered with (SendTaskSuccess): checked for size before the decision is taken. */
const decisionReply = (body: Decision, by: string) => ({
  decision: body.decision,
  ...(body.output === undefined || body.decision === 'reject' ? {} : { output: body.output }),
  ...(body.comment === undefined ? {} : { comment: body.comment }),
  by,
});

export function approvalView(record: ApprovalRecord): ApprovalView {
  const { taskToken: _secret, ...visible } = record;
  return visible;
}

/** The target of the step an approval is about: a human gate, or the agent/tool whose result waits for review. */
async function targetOf(store: Store, approval: ApprovalRecord): Promise<string | undefined> {
  const run = await store.getRun(approval.runId);
  if (!run) return undefined;
  return (await stepOfApproval(store, run, approval))?.target ?? undefined;
}

export function approvalsRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store } = deps;

  const requireApproval = async (id: string): Promise<ApprovalRecord> => {
    const approval = await store.getApproval(id);
    if (!approval) throw notFound(`approval ${id} not found`);
    return approval;
  };

  const checkOutput = async (approval: ApprovalRecord, decision: Decision): Promise<void> => {
    if (decision.decision === 'reject') return;
    if (decision.decision === 'edit' && decision.output === undefined) {
      throw new ApiError(422, 'E_INVALID_OUTPUT', 'an edit must carry the corrected `output`');
    }
    if (decision.output === undefined) return;
    const target = await targetOf(store, approval);
    if (target === undefined) {
      throw new ApiError(422, 'E_INVALID_OUTPUT', `step ${approval.stepId} is no longer in the run's plan`);
    }
    const check = deps.catalog.validateOutput(target, decision.output);
    if (!check.ok) {
      throw new ApiError(422, 'E_INVALID_OUTPUT', `the output does not match the outputSchema of ${target}`, {
        details: check.errors,
      });
    }
  };

  serve(app, listApprovals, async (c) => {
    const query = readQuery(c, listApprovalsQuery);
    const limit = query.limit ?? MAX_APPROVAL_PAGE;
    const approvals = await store.listApprovals({
      tenant: c.get('caller').tenant,
      ...(query.status ? { status: query.status } : {}),
      ...(query.runId ? { runId: query.runId } : {}),
      ...(query.cursor ? { after: decodeCursor('approvals', query.cursor) } : {}),
      limit,
    });
    // Only what the caller may decide; the cursor follows the store's page, so a short page may have more after it.
    const shown = await decidableBy(approvalContextReader(store, deps.catalog), c.get('caller'), approvals);
    const last = approvals.at(-1);
    return c.json({
      approvals: shown.map(approvalView),
      ...(approvals.length === limit && last
        ? { nextCursor: encodeCursor('approvals', { createdAt: last.createdAt, approvalId: last.approvalId }) }
        : {}),
    });
  });

  serve(app, getApproval, async (c) => c.json({ approval: approvalView(await requireApproval(c.req.param('id'))) }));

  /**
   * A decision is the run's decider's to take: it answers the truth. OK means the decision will be honoured (its
   * step is judged by it, even if its wait timed out meanwhile); 409 names the decision taken instead; 410 says the
   * step no longer waits for it, and from then on the approval is not listed as pending. What only the edge can check
   * (the output's contract, which needs the catalog, and its size) is checked before.
   */
  serve(app, decideApproval, async (c) => {
    const body = await readJson(c, decisionBody);
    const approval = await requireApproval(c.req.param('id'));
    // Before anything is sent: a caller who may not decide this approval changes nothing (403).
    await checkMayDecide(approvalContextReader(store, deps.catalog), c.get('caller'), approval);
    const by = c.get('principal');
    if (approval.kind !== 'revision' && approval.status === 'pending') {
      await checkOutput(approval, body);
      const replyBytes = Buffer.byteLength(JSON.stringify(decisionReply(body, by)), 'utf8');
      if (replyBytes > MAX_DECISION_BYTES)
        throw new ApiError(
          413,
          'E_TOO_LARGE',
          `the decision is ${replyBytes} bytes of JSON; a waiting step takes at most ${MAX_DECISION_BYTES}`,
        );
    }
    const reply = await deps.mailbox.ask(approval.runId, {
      kind: 'DecideApproval',
      approvalId: approval.approvalId,
      decision: body.decision,
      ...(body.output === undefined ? {} : { output: body.output }),
      ...(body.comment === undefined ? {} : { comment: body.comment }),
      by,
    });
    if (!reply.ok) throw new ApiError(reply.status, reply.code, reply.message, { details: reply.details });
    return c.json({ approval: approvalView(await requireApproval(approval.approvalId)) });
  });

  return app;
}
