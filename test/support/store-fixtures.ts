/**
 * Record builders for Store behaviour tests: complete, valid records with overridable fields.
 */
import type { Plan } from '../../shared/plan/schema.ts';
import type { ApprovalRecord, AttemptRecord, RunRecord, StepRecord } from '../../shared/ports/store.ts';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** A deterministic ISO timestamp `seconds` after a fixed origin. */
export const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

let counter = 0;
/** Unique ids per call, so concurrent tests in one table never collide. */
export const uniqueId = (prefix: string): string => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export function aRun(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: uniqueId('run'),
    status: 'planning',
    objective: 'Ship the quarterly report',
    mode: 'DECOMPOSE',
    revision: 0,
    createdAt: at(0),
    updatedAt: at(0),
    replans: 0,
    ...overrides,
  };
}

export function aPlan(overrides: Partial<Plan> = {}): Plan {
  return {
    schemaVersion: 1,
    revision: 1,
    objective: 'Ship the quarterly report',
    steps: [
      { id: 'gather', title: 'Gather numbers', target: 'tool:conformance.echo', dependsOn: [], input: { value: 1 } },
      { id: 'write', title: 'Write report', target: 'agent:conformance.scripted', dependsOn: ['gather'] },
    ],
    ...overrides,
  };
}

export function aStep(overrides: Partial<StepRecord> = {}): StepRecord {
  const upstream = overrides.upstream ?? [];
  return {
    runId: 'run-x',
    stepId: uniqueId('step'),
    status: upstream.length === 0 ? 'ready' : 'pending',
    generation: 1,
    upstream,
    remaining: upstream.length,
    released: [],
    attempts: 0,
    trace: [],
    updatedAt: at(0),
    ...overrides,
  };
}

export function anAttempt(overrides: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    runId: 'run-x',
    stepId: 'gather',
    generation: 1,
    attempt: 1,
    target: 'tool:conformance.echo',
    startedAt: at(1),
    outcome: 'running',
    input: { value: 1 },
    evidence: { binding: 'builtin' },
    ...overrides,
  };
}

export function anApproval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    approvalId: uniqueId('approval'),
    runId: 'run-x',
    stepId: 'review',
    generation: 1,
    kind: 'approval',
    status: 'pending',
    question: 'Publish the report?',
    input: { draft: 'v1' },
    taskToken: uniqueId('token'),
    createdAt: at(10),
    deadline: at(3610),
    ...overrides,
  };
}

/** A JSON value whose serialized size is about `bytes`. */
export const payloadOf = (bytes: number): { blob: string } => ({ blob: 'x'.repeat(bytes) });
