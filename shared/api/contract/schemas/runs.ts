/**
 * What the run routes answer (run-view.ts builds them): a run with its steps in plan order, a page of run summaries,
 * a plan revision, the run's audit log. Objects stay open (a client must ignore fields it does not know), so a field
 * added to a view is not a breaking change; the required ones are always there.
 */
import { z } from 'zod';
import { budgetSchema, planSchema, planStepSchema, stepErrorSchema } from '../../../plan/schema.ts';
import { described, named } from '../registry.ts';
import { cursorPage, RunStatus, StepStatus } from './common.ts';

export const Plan = named('Plan', planSchema, { description: 'A plan (format v1): see `cairn schema`.' });
export const PlanStep = named('PlanStep', planStepSchema);
export const Budget = named('Budget', budgetSchema);
export const StepError = named('StepError', stepErrorSchema);

const timestamp = z.string();
const json = z.unknown();

export const Spend = named('Spend', z.object({ tokens: z.number(), costUsd: z.number() }));

export const TraceEntry = named(
  'TraceEntry',
  z.object({ kind: z.enum(['plan', 'exec', 'judge', 'fail']), at: timestamp, text: z.string() }),
);

export const Terminal = named(
  'Terminal',
  z.object({
    state: z.enum(['complete', 'failed', 'paused', 'cancelled']),
    reason: z.string(),
    evidence: described('Whatever proves the state: root-cause step ids, counts, errors.', z.record(z.string(), json)),
  }),
);

export const Compensation = named(
  'Compensation',
  z.object({
    target: z.string(),
    input: json.optional(),
    output: json.optional(),
    error: StepError.nullable().optional(),
    attempts: z.number(),
    idempotencyKey: z.string(),
    startedAt: timestamp,
    finishedAt: timestamp.optional(),
    round: z.number().optional(),
    resolution: z.object({ by: z.string().nullable(), note: z.string(), at: timestamp }).optional(),
    retriedBy: z.string().nullable().optional(),
  }),
  { description: "A finished mutating step's compensation (saga): what was called, how it ended." },
);

export const BudgetReplan = named(
  'BudgetReplan',
  z.object({
    trigger: z.literal('budget'),
    outcome: z.string(),
    revision: z.number().optional(),
    reason: z.string().optional(),
    code: z.string().optional(),
    message: z.string().optional(),
  }),
  { description: 'The budget replan (`onExhausted: "replan"`), once the run asked for one: what became of it.' },
);

export const StepView = named(
  'StepView',
  z.object({
    id: z.string(),
    title: z.string(),
    target: z.string().nullable(),
    parentId: z.string().nullable(),
    dependsOn: z.array(z.string()),
    status: StepStatus,
    generation: described('null for a group (a group has no executions).', z.number().nullable()),
    attempts: z.number(),
    output: json,
    error: StepError.nullable(),
    confidence: z.number().nullable(),
    startedAt: timestamp.nullable(),
    finishedAt: timestamp.nullable(),
    trace: z.array(TraceEntry),
    outputOmitted: described(
      'The output was over 16 KB of JSON: GET /runs/{runId}/steps/{stepId} shows it.',
      z.object({ bytes: z.number() }).optional(),
    ),
    traceOmitted: z.number().optional(),
    usage: Spend.nullable().optional(),
    budget: Budget.optional(),
    metadata: z.record(z.string(), json).optional(),
    segment: z.string().optional(),
    rollbackHint: z.string().optional(),
    compensation: Compensation.optional(),
  }),
);

const runFields = {
  runId: z.string(),
  status: RunStatus,
  objective: z.string(),
  revision: z.number(),
  startedBy: described(
    'Who started the run: a JWT `sub`, a tokens file subject, or `local-token` (absent on older runs).',
    z.string().optional(),
  ),
  terminal: Terminal.optional(),
  cancelling: described('A cancellation has begun and the run has not ended yet.', z.literal(true).optional()),
};

export const RunAction = named(
  'RunAction',
  z.object({
    type: z.enum(['cancel', 'replan', 'invalidate', 'compensation', 'budget']),
    requestedBy: described(
      "The caller's subject, `webhook:<source>` for a resource change, or null when not known.",
      z.string().nullable(),
    ),
    at: timestamp,
    stepId: z.string().optional(),
    detail: z.string().optional(),
  }),
  { description: 'What a person (or a webhook) did to a run, and who.' },
);

export const RunView = named(
  'RunView',
  z.object({
    ...runFields,
    steps: z.array(StepView),
    usage: Spend.optional(),
    budget: described("The plan's budget, with the limits a person raised.", Budget.optional()),
    maxReplans: described(
      "The replan limit a person raised the run's to (absent: the deployment's).",
      z.number().optional(),
    ),
    actions: described(
      'Who changed the run after it started, oldest first: the last 100.',
      z.array(RunAction).optional(),
    ),
    budgetReplan: BudgetReplan.optional(),
    ...cursorPage,
  }),
  { description: 'A run with a page of its steps in plan order (nextCursor: more steps follow).' },
);

export const RunSummary = named(
  'RunSummary',
  z.object({
    ...runFields,
    progress: described(
      'Steps of the current plan done (succeeded or skipped) and in all (superseded ones left out).',
      z.object({ done: z.number(), total: z.number() }),
    ),
    usage: Spend,
    awaitingApproval: described(
      'Steps waiting for a person to decide (a run paused for people, not at a deadline).',
      z.number(),
    ),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
);

export const RunPage = named('RunPage', z.object({ runs: z.array(RunSummary), ...cursorPage }));

export const RunCreated = named('RunCreated', z.object({ runId: z.string(), status: RunStatus }), {
  examples: [{ runId: '0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1', status: 'planning' }],
});

export const PlanRevision = named('PlanRevision', z.object({ plan: Plan, revision: z.number(), reason: z.string() }));

export const RunEvent = named(
  'RunEvent',
  z.object({
    runId: z.string(),
    seq: described(
      "The event's place in the log, growing with the run's decisions: pass it as `after` to read what follows.",
      z.string(),
    ),
    type: z.string(),
    at: timestamp,
    stepId: z.string().optional(),
    generation: z.number().optional(),
    detail: z.record(z.string(), json),
  }),
);

export const EventPage = named(
  'EventPage',
  z.object({
    events: z.array(RunEvent),
    ...cursorPage,
    finished: described(
      'Following (`follow=1`): the run has ended or paused and no event follows this page, so a follower stops.',
      z.boolean().optional(),
    ),
  }),
);
