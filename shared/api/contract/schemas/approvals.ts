/**
 * What the approval and planning routes answer: an approval (its task token never leaves the server), a page of
 * them, a planning job (plans.ts planJobView) and the small answers of the routes that change a run.
 */
import { z } from 'zod';
import { described, named } from '../registry.ts';
import { cursorPage, RunStatus, StepStatus } from './common.ts';
import { Plan } from './runs.ts';

const json = z.unknown();

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'edited', 'expired'] as const;

export const HeldRevision = named(
  'HeldRevision',
  z.object({
    baseRevision: z.number(),
    plan: Plan,
    scope: z.record(z.string(), json),
    change: z.record(z.string(), json),
    replaces: z.record(z.string(), z.string()),
    reason: z.string(),
    targets: z.array(z.string()).optional(),
  }),
  { description: 'A plan revision held for approval (it adds a mutating target): approving makes it current.' },
);

export const Approval = named(
  'Approval',
  z.object({
    approvalId: z.string(),
    runId: z.string(),
    stepId: z.string(),
    generation: z.number(),
    kind: z.enum(['approval', 'review', 'revision']),
    status: z.enum(APPROVAL_STATUSES),
    question: z.string(),
    input: json.optional(),
    upstreamOutputs: z.record(z.string(), json).optional(),
    heldOutput: described('A review: the result that waits for a person.', json.optional()),
    heldConfidence: z.number().nullable().optional(),
    heldRevision: HeldRevision.optional(),
    createdAt: z.string(),
    deadline: z.string(),
    decidedAt: z.string().optional(),
    decidedBy: z.string().optional(),
    comment: z.string().optional(),
    output: json.optional(),
  }),
);

export const ApprovalPage = named('ApprovalPage', z.object({ approvals: z.array(Approval), ...cursorPage }));
export const ApprovalAnswer = named('ApprovalAnswer', z.object({ approval: Approval }));

export const OutputCheck = named(
  'OutputCheck',
  z.object({
    approvalId: z.string(),
    status: z.enum(APPROVAL_STATUSES),
    target: z.string(),
    valid: z.boolean(),
    errors: z.array(json),
  }),
);

export const PlanJob = named(
  'PlanJob',
  z.object({
    jobId: z.string(),
    kind: z.enum(['plan', 'replan']),
    status: z.enum(['pending', 'succeeded', 'failed']),
    runId: z.string().optional(),
    createdAt: z.string(),
    finishedAt: z.string().optional(),
    plan: Plan.optional(),
    revision: z.number().optional(),
    approvalId: z.string().optional(),
    error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).optional(),
  }),
  {
    description: 'A planning job: polled at GET /plans/{jobId} until it succeeded (plan or revision) or failed.',
    examples: [
      {
        jobId: '5a1e2b7c-2a44-4d0e-9d1b-6f1f0c7f8a90',
        kind: 'plan',
        status: 'pending',
        createdAt: '2026-01-01T00:00:00.000Z',
      },
    ],
  },
);

export const PlanAnswer = named('PlanAnswer', z.object({ plan: Plan }));
export const Valid = named('Valid', z.object({ valid: z.literal(true) }));

export const RunCancelled = named('RunCancelled', z.object({ runId: z.string(), status: RunStatus }));

/** A cancel's or an invalidation's decision still to come: its status is read at `location` (a Location header too). */
export const CommandPending = named(
  'CommandPending',
  z.object({ runId: z.string(), commandId: z.string(), decision: z.literal('pending'), location: z.string() }),
  {
    examples: [
      {
        runId: '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1',
        commandId: 'cancel~5d1f7c2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f~1a2b3c4d5e6f',
        decision: 'pending',
        location:
          '/runs/0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1/commands/cancel~5d1f7c2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f~1a2b3c4d5e6f',
      },
    ],
  },
);

export const Invalidated = named(
  'Invalidated',
  z.object({ runId: z.string(), stepIds: z.array(z.string()), reopened: z.boolean() }),
  { examples: [{ runId: '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1', stepIds: ['fetch', 'report'], reopened: true }] },
);

export const LimitsRaised = named(
  'LimitsRaised',
  z.object({
    runId: z.string(),
    status: RunStatus,
    limits: z.object({
      maxTokens: z.number().optional(),
      maxCostUsd: z.number().optional(),
      maxSeconds: z.number().optional(),
      maxReplans: z.number(),
    }),
  }),
  {
    description: "The run's limits now (the plan budget's, with every raise, and its replan limit), and its status.",
    examples: [
      { runId: '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1', status: 'running', limits: { maxTokens: 5000, maxReplans: 2 } },
    ],
  },
);

export const CompensationActed = named(
  'CompensationActed',
  z.object({ runId: z.string(), stepId: z.string(), status: StepStatus, reopened: z.boolean() }),
);
