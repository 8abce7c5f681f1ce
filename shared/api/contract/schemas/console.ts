/**
 * What the console's data routes answer (console/*.ts builds them): one step whole with its attempts, approvals and
 * generations; the plan revisions and what changed between two; the run's timeline.
 */
import { z } from 'zod';
import { named } from '../registry.ts';
import { Approval } from './approvals.ts';
import { StepStatus } from './common.ts';
import { Compensation, PlanStep, RunEvent, StepError, TraceEntry } from './runs.ts';

const json = z.unknown();
const stepRef = z.object({ id: z.string(), title: z.string() });

export const PlanDiff = named(
  'PlanDiff',
  z.object({
    added: z.array(stepRef),
    removed: z.array(stepRef),
    changed: z.array(z.object({ id: z.string(), title: z.string(), fields: z.array(z.string()) })),
    superseded: z.array(stepRef),
  }),
);

export const RevisionDiff = named(
  'RevisionDiff',
  z.object({
    runId: z.string(),
    from: z.number().nullable(),
    to: z.number(),
    reason: z.string(),
    createdAt: z.string(),
    diff: PlanDiff,
  }),
);

const counts = z.object({ added: z.number(), removed: z.number(), changed: z.number(), superseded: z.number() });

export const Revisions = named(
  'Revisions',
  z.object({
    runId: z.string(),
    revision: z.number(),
    revisions: z.array(
      z.object({
        revision: z.number(),
        reason: z.string(),
        createdAt: z.string(),
        current: z.boolean(),
        steps: z.number(),
        changes: counts.nullable(),
      }),
    ),
  }),
);

export const Attempt = named(
  'Attempt',
  z.object({
    runId: z.string(),
    stepId: z.string(),
    generation: z.number(),
    attempt: z.number(),
    target: z.string(),
    startedAt: z.string(),
    finishedAt: z.string().optional(),
    outcome: z.enum(['running', 'succeeded', 'failed']),
    input: json.optional(),
    output: json.optional(),
    confidence: z.number().nullable().optional(),
    error: StepError.nullable().optional(),
    evidence: z.record(z.string(), json),
    usage: z.record(z.string(), json).optional(),
    revision: z.number().optional(),
    verdict: z.enum(['pass', 'review', 'fail']).optional(),
  }),
);

export const StepDetail = named(
  'StepDetail',
  z.object({
    runId: z.string(),
    revision: z.number(),
    kind: z.enum(['tool', 'agent', 'human', 'group']),
    status: StepStatus,
    step: PlanStep,
    children: z.array(z.string()),
    record: z
      .object({
        generation: z.number(),
        attempts: z.number(),
        output: json,
        error: StepError.nullable(),
        confidence: z.number().nullable(),
        startedAt: z.string().nullable(),
        finishedAt: z.string().nullable(),
        upstream: z.array(z.string()),
        trace: z.array(TraceEntry),
        compensation: Compensation.optional(),
      })
      .nullable(),
    attempts: z.array(Attempt),
    generations: z.array(
      z.object({
        generation: z.number(),
        attempts: z.number(),
        outcome: z.enum(['running', 'succeeded', 'failed']).nullable(),
        startedAt: z.string().nullable(),
        finishedAt: z.string().nullable(),
        current: z.boolean(),
      }),
    ),
    approvals: z.array(Approval),
    events: z.array(RunEvent),
  }),
  { description: 'One step whole: definition, record, every attempt with its evidence, approvals, generations.' },
);

const path = z.object({ steps: z.array(z.string()), seconds: z.number() });

export const Timeline = named(
  'Timeline',
  z.object({
    runId: z.string(),
    revision: z.number(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    now: z.string(),
    rows: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        target: z.string(),
        parentId: z.string().nullable(),
        status: StepStatus,
        estimatedSeconds: z.number().nullable(),
        plannedStartSeconds: z.number(),
        startedAt: z.string().nullable(),
        finishedAt: z.string().nullable(),
        attempts: z.array(
          z.object({
            generation: z.number(),
            attempt: z.number(),
            startedAt: z.string(),
            finishedAt: z.string().nullable(),
            outcome: z.enum(['running', 'succeeded', 'failed']),
            error: StepError.nullable(),
          }),
        ),
        waits: z.array(
          z.object({
            approvalId: z.string(),
            kind: z.enum(['approval', 'review', 'revision']),
            status: z.enum(['pending', 'approved', 'rejected', 'edited', 'expired']),
            from: z.string(),
            to: z.string().nullable(),
            deadline: z.string(),
          }),
        ),
      }),
    ),
    criticalPath: z.object({ planned: path, actual: path }),
  }),
);
