/**
 * Human approvals: list, read, decide. Exactly one decision counts: the store's conditional write on `pending`
 * picks the winner, everyone else gets 409; a decision after the deadline gets 410. Only the winner answers the
 * step execution's task token, and the winner's own repeat of it (a request whose answer was lost) answers it again.
 * Task tokens never leave the server. Who may decide (the gate's approvers, no self-approval) is checked before
 * anything else, and the list holds only what the caller may decide (approval-rules.ts).
 */
import { Hono } from 'hono';
import type { z } from 'zod';
import { awaitsDecision, isBeingCancelled } from '../engine/statuses.ts';
import { isConflictError } from '../errors.ts';
import type { OutboxEntry } from '../events/outbox.ts';
import type { ApprovalRecord, Store } from '../ports/store.ts';
import { recordedRequest } from '../services/cancellation.ts';
import { CLOSED_BY_CANCEL } from '../services/revision-approvals.ts';
import { REVISION_EXPIRED_COMMENT } from '../services/revision-wait.ts';
import { isReopenable } from '../services/run-reopen.ts';
import { REMOVED_APPROVAL_COMMENT, SUPERSEDED_APPROVAL_COMMENTS } from '../services/superseded-generations.ts';
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

const DECIDED_STATUS = { approve: 'approved', reject: 'rejected', edit: 'edited' } as const;

/**
 * Errors of SendTaskSuccess that mean the execution no longer waits (its wait timed out, it was stopped): both
 * Executions adapters report a closed token as a ConflictError; the raw Step Functions names are accepted too.
 */
const GONE_TOKEN_ERRORS = new Set(['ConflictError', 'TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);
const SEND_ATTEMPTS = 3;

export type ApprovalView = Omit<ApprovalRecord, 'taskToken'>;

/** What the waiting step is answered with (SendTaskSuccess). */
const decisionReply = (body: Decision, by: string) => ({
  decision: body.decision,
  ...(body.output === undefined || body.decision === 'reject' ? {} : { output: body.output }),
  ...(body.comment === undefined ? {} : { comment: body.comment }),
  by,
});

/** Whether the approval records exactly this decision by this person (a repeat of the request that made it). */
function isSameDecision(approval: ApprovalRecord, body: Decision, by: string): boolean {
  const output = body.decision === 'reject' ? undefined : body.output;
  return (
    approval.status === DECIDED_STATUS[body.decision] &&
    approval.decidedBy === by &&
    approval.comment === body.comment &&
    JSON.stringify(approval.output) === JSON.stringify(output)
  );
}

export function approvalView(record: ApprovalRecord): ApprovalView {
  const { taskToken: _secret, ...visible } = record;
  return visible;
}

const conflict = (record: ApprovalRecord | undefined): ApiError => {
  if (record?.status !== 'expired')
    return new ApiError(409, 'E_ALREADY_DECIDED', `the approval was already decided (${record?.status ?? 'unknown'})`);
  // Gone for good as well, but not for lack of time: the step's new generation asks again, under another id.
  if (record.comment !== undefined && SUPERSEDED_APPROVAL_COMMENTS.has(record.comment))
    return new ApiError(410, 'E_APPROVAL_SUPERSEDED', 'the step started a new generation: it asks again');
  if (record.comment === REMOVED_APPROVAL_COMMENT)
    return new ApiError(410, 'E_APPROVAL_SUPERSEDED', 'a plan revision removed the step: nothing asks again');
  return new ApiError(410, 'E_APPROVAL_EXPIRED', 'the approval expired before a decision was made');
};

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

  const answer = async (token: string, payload: Record<string, unknown>): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.executions.sendTaskSuccess(token, payload);
        return;
      } catch (error) {
        const name = error instanceof Error ? error.name : '';
        if (GONE_TOKEN_ERRORS.has(name)) {
          throw new ApiError(410, 'E_APPROVAL_EXPIRED', 'the step no longer waits for this decision');
        }
        // The decision is already recorded: a lost answer would leave the step waiting until its timeout.
        if (attempt >= SEND_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      }
    }
  };

  /**
   * A held plan revision (revision-approvals.ts): approve makes it current, reject keeps the previous revision;
   * no output to edit, and a decision after its deadline closes it (410) like any other.
   */
  const decideRevision = async (approval: ApprovalRecord, body: Decision, by: string): Promise<ApprovalRecord> => {
    if (body.decision === 'edit' || body.output !== undefined)
      throw new ApiError(422, 'E_INVALID_OUTPUT', 'a plan revision is approved or rejected, never edited');
    if (!deps.decideRevision)
      throw new ApiError(503, 'E_UNAVAILABLE', 'replanning is not configured on this deployment');
    if (deps.clock().getTime() > Date.parse(approval.deadline)) {
      // Closed as its deadline's wait closes it (announced while the run is open); that wait, due now, then rejects
      // the revision (services/revision-wait.ts).
      const run = await store.getRun(approval.runId);
      const decidedAt = deps.clock().toISOString();
      const expired = await store.decideApproval(
        approval.approvalId,
        { status: 'expired', decidedAt, comment: REVISION_EXPIRED_COMMENT },
        run === undefined || isReopenable(run) ? undefined : announceDecision(approval, 'expired', decidedAt),
      );
      throw conflict(expired ?? (await store.getApproval(approval.approvalId)));
    }
    try {
      await deps.decideRevision({
        approvalId: approval.approvalId,
        runId: approval.runId,
        decision: body.decision,
        by,
        ...(body.comment === undefined ? {} : { comment: body.comment }),
      });
    } catch (error) {
      if (!isConflictError(error)) throw error;
      const code = typeof error.context.code === 'string' ? error.context.code : 'E_CONFLICT';
      throw new ApiError(409, code, error.message);
    }
    return (await store.getApproval(approval.approvalId)) ?? approval;
  };

  /** ApprovalDecided travels with the decision's write (the outbox): recorded and announced together. */
  const announceDecision = (
    approval: ApprovalRecord,
    decision: 'approve' | 'reject' | 'edit' | 'expired',
    at: string,
    by?: string,
  ): OutboxEntry => ({
    id: deps.newId(),
    runId: approval.runId,
    at,
    events: [
      {
        type: 'ApprovalDecided',
        detail: {
          runId: approval.runId,
          stepId: approval.stepId,
          generation: approval.generation,
          approvalId: approval.approvalId,
          decision,
          ...(by === undefined ? {} : { by }),
        },
      },
    ],
  });

  serve(app, listApprovals, async (c) => {
    const query = readQuery(c, listApprovalsQuery);
    const limit = query.limit ?? MAX_APPROVAL_PAGE;
    const approvals = await store.listApprovals({
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
   * The same decision sent again by the person who made it: the first request's write landed but its answer was lost
   * (a store timeout: 503, "send the request again"), or its answer to the step never got through. The step may
   * still wait for it, so the token is answered again; a token already answered is the first answer having landed.
   */
  const repeatDecision = async (approval: ApprovalRecord, body: Decision, by: string): Promise<boolean> => {
    if (!isSameDecision(approval, body, by)) return false;
    try {
      await answer(approval.taskToken, decisionReply(body, by));
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 410)) throw error;
    }
    return true;
  };

  serve(app, decideApproval, async (c) => {
    const body = await readJson(c, decisionBody);
    const approval = await requireApproval(c.req.param('id'));
    // Before anything is written or answered: a caller who may not decide this approval changes nothing (403).
    await checkMayDecide(approvalContextReader(store, deps.catalog), c.get('caller'), approval);
    if (approval.status !== 'pending') {
      // A revision approval has no task token to answer again: another decision on it, a repeat or not, is 409.
      if (approval.kind !== 'revision' && (await repeatDecision(approval, body, c.get('principal'))))
        return c.json({ approval: approvalView(approval) });
      if (approval.kind === 'revision' && approval.comment === CLOSED_BY_CANCEL)
        throw new ApiError(409, 'E_RUN_CANCELLED', 'the run was cancelled: its revision is not made');
      throw conflict(approval);
    }
    if (approval.kind === 'revision')
      return c.json({ approval: approvalView(await decideRevision(approval, body, c.get('principal'))) });
    const now = deps.clock();
    const decidedAt = now.toISOString();
    if (now.getTime() > Date.parse(approval.deadline)) {
      const expired = await store.decideApproval(
        approval.approvalId,
        { status: 'expired', decidedAt },
        announceDecision(approval, 'expired', decidedAt),
      );
      if (!expired) throw conflict(await store.getApproval(approval.approvalId));
      throw conflict(expired);
    }
    const [run, step] = await Promise.all([
      store.getRun(approval.runId),
      store.getStep(approval.runId, approval.stepId),
    ]);
    if (run !== undefined && isBeingCancelled(run)) {
      // The cancel closes the gate with the run's other steps; one that died after its mark is finished here, as a
      // claim the mark refuses finishes it (else the gate would wait for its timeout or the run's deadline).
      await deps.cancelRun(run.runId, recordedRequest(run));
      throw new ApiError(409, 'E_RUN_CANCELLED', 'the run is being cancelled: no decision is taken');
    }
    if (!awaitsDecision(run, step, approval.generation)) {
      // Nothing waits for it any more: it is closed unannounced (its run may have ended), never decided.
      await store.decideApproval(approval.approvalId, {
        status: 'expired',
        decidedAt,
        comment: 'the step no longer waits',
      });
      throw new ApiError(410, 'E_APPROVAL_EXPIRED', 'the step no longer waits for this decision');
    }
    await checkOutput(approval, body);
    const by = c.get('principal');
    const reply = decisionReply(body, by);
    // Checked before the decision is recorded: a decision the waiting step could never receive must not win.
    const replyBytes = Buffer.byteLength(JSON.stringify(reply), 'utf8');
    if (replyBytes > MAX_DECISION_BYTES) {
      throw new ApiError(
        413,
        'E_TOO_LARGE',
        `the decision is ${replyBytes} bytes of JSON; a waiting step takes at most ${MAX_DECISION_BYTES}`,
      );
    }
    const decided = await store.decideApproval(
      approval.approvalId,
      {
        status: DECIDED_STATUS[body.decision],
        decidedAt,
        decidedBy: by,
        ...(body.comment === undefined ? {} : { comment: body.comment }),
        ...(body.output === undefined || body.decision === 'reject' ? {} : { output: body.output }),
      },
      announceDecision(approval, body.decision, decidedAt, by),
    );
    if (!decided) throw conflict(await store.getApproval(approval.approvalId));
    // The token as the decision found it: a retried wait may have taken the request over since it was read.
    await answer(decided.taskToken, reply);
    return c.json({ approval: approvalView(decided) });
  });

  return app;
}
