/** Human approvals (approvals.ts serves them, the check console/data-routes.ts): list, read, decide, dry-run. */
import { decisionBody } from '../../body.ts';
import { defineRoute } from '../route.ts';
import { ApprovalAnswer, ApprovalPage, OutputCheck } from '../schemas/approvals.ts';
import { approvalParams, ErrorBody } from '../schemas/common.ts';
import { listApprovalsQuery, outputCheckBody } from '../schemas/requests.ts';

export const listApprovals = defineRoute({
  operationId: 'listApprovals',
  method: 'get',
  path: '/approvals',
  tag: 'approvals',
  summary: 'List the approvals the caller may decide, oldest first',
  description:
    "Only what the caller may decide: an approver in the gate's groups, and not of a run they started. Pages of " +
    'up to 200 (a page may hold fewer while more follow); follow `nextCursor` (as `cursor`) until it is absent.',
  query: listApprovalsQuery,
  responses: { 200: { description: 'A page of approvals.', schema: ApprovalPage } },
});

export const getApproval = defineRoute({
  operationId: 'getApproval',
  method: 'get',
  path: '/approvals/{id}',
  tag: 'approvals',
  summary: 'Read an approval',
  params: approvalParams,
  responses: { 200: { description: 'The approval.', schema: ApprovalAnswer } },
});

export const decideApproval = defineRoute({
  operationId: 'decideApproval',
  method: 'post',
  path: '/approvals/{id}',
  tag: 'approvals',
  summary: 'Approve, reject or edit',
  description:
    "Exactly one decision counts. The decider's own repeat of it (an answer lost on the way) answers 200 again, so " +
    'the request may be sent again; any other decision after the first is 409.',
  retry: 'safe',
  params: approvalParams,
  body: { schema: decisionBody, required: true, example: { decision: 'approve', comment: 'looks right' } },
  responses: {
    200: { description: 'The decided approval.', schema: ApprovalAnswer },
    403: {
      description:
        "E_FORBIDDEN: not an approver, or not in one of the gate's `approval.approvers` groups; E_SELF_APPROVAL: " +
        'the caller started the run (unless the step says `approval.allowSelf: true`).',
      schema: ErrorBody,
    },
    409: { description: 'E_ALREADY_DECIDED, or E_RUN_CANCELLED.', schema: ErrorBody },
    410: { description: 'E_APPROVAL_EXPIRED or E_APPROVAL_SUPERSEDED.', schema: ErrorBody },
    422: { description: "E_INVALID_OUTPUT: the output does not match the step's outputSchema.", schema: ErrorBody },
  },
});

export const checkApprovalOutput = defineRoute({
  operationId: 'checkApprovalOutput',
  method: 'post',
  path: '/approvals/{id}/check',
  tag: 'approvals',
  summary: "Check an edited output against the step's contract, deciding nothing",
  retry: 'safe',
  params: approvalParams,
  body: { schema: outputCheckBody, required: true, example: { output: { message: 'hello' } } },
  responses: {
    200: { description: 'Whether the output would be taken.', schema: OutputCheck },
    422: { description: "E_INVALID_OUTPUT: the step is no longer in the run's plan.", schema: ErrorBody },
  },
});

export const APPROVAL_ROUTES = [listApprovals, getApproval, decideApproval, checkApprovalOutput] as const;
