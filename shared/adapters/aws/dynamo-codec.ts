/**
 * Record <-> item mapping for every entity of the store. Field codecs per record type are the single place that
 * says how a field is stored; updates reuse them, so a patched field is stored exactly as a put would store it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETENTION_DAYS, tenantOf } from '../../config/defaults.ts';
import {
  type Plan,
  RUN_STATUSES,
  type RunStatus,
  STEP_STATUSES,
  type StepError,
  type StepStatus,
} from '../../plan/schema.ts';
import type { ModelUsage } from '../../ports/capabilities.ts';
import type {
  ApprovalRecord,
  AttemptRecord,
  CompensationRecord,
  HeldRevision,
  IdempotencyRecord,
  RaisedLimits,
  ReplanRecord,
  RunAction,
  RunEventRecord,
  RunRecord,
  StepGenerationRecord,
  StepRecord,
  TerminalRecord,
  TraceEntry,
} from '../../ports/store.ts';
import {
  decodeFields,
  encodeFields,
  enumField,
  type FieldCodec,
  type FieldCodecs,
  type Item,
  json,
  nullable,
  numberField,
  numberMapField,
  stringField,
  stringListField,
  stringSetField,
} from './dynamo-attributes.ts';
import { indexKeys, itemKeys, TTL_ATTRIBUTE } from './table-layout.ts';

export const ENTITY_ATTRIBUTE = 'entity';

const TRACE_KINDS = ['plan', 'exec', 'judge', 'fail'] as const;
const traceKind = enumField(TRACE_KINDS);

export function encodeTraceEntries(entries: readonly TraceEntry[]): AttributeValue & { L: AttributeValue[] } {
  return { L: entries.map((e) => ({ M: { kind: { S: e.kind }, at: { S: e.at }, text: { S: e.text } } })) };
}

export const traceField: FieldCodec<readonly TraceEntry[]> = {
  encode: (entries) => encodeTraceEntries(entries),
  decode: (value, field) =>
    (value.L ?? []).map((entry) => {
      const m = entry.M ?? {};
      const read = (name: string): AttributeValue => m[name] ?? { NULL: true };
      return {
        kind: traceKind.decode(read('kind'), `${field}.kind`),
        at: stringField.decode(read('at'), `${field}.at`),
        text: stringField.decode(read('text'), `${field}.text`),
      };
    }),
  missing: () => [],
};

const nullableError = nullable(json<StepError>());
const nullableNumber = nullable(numberField);

/** A string set that is simply absent when never written (so a record round-trips without a new empty field). */
const optionalStringSet: FieldCodec<readonly string[]> = {
  encode: stringSetField.encode,
  decode: stringSetField.decode,
};

// runs

export const runCodecs: FieldCodecs<RunRecord> = {
  runId: stringField,
  stepShards: numberField,
  status: enumField(RUN_STATUSES),
  objective: stringField,
  mode: enumField(['DIRECT', 'DECOMPOSE', 'SUBMITTED'] as const),
  directTarget: stringField,
  submittedPlan: json<Plan>(),
  candidatePlan: json<unknown>(),
  planStamp: stringField,
  revision: numberField,
  createdAt: stringField,
  updatedAt: stringField,
  idempotencyKey: stringField,
  tenant: stringField,
  startedBy: stringField,
  waiterToken: stringField,
  terminal: json<TerminalRecord>(),
  replans: numberField,
  replanFingerprints: optionalStringSet,
  handledFailures: optionalStringSet,
  reopened: numberField,
  previousTerminals: json<readonly TerminalRecord[]>(),
  endCounts: json<Readonly<Partial<Record<StepStatus, number>>>>(),
  replanLog: json<readonly ReplanRecord[]>(),
  replanDeclines: optionalStringSet,
  usageTokens: numberField,
  usageCostUsd: numberField,
  cancelCompensation: json<boolean>(),
  cancelRequestedBy: stringField,
  cancelling: json<boolean>(),
  budgetWarned: optionalStringSet,
  budgetExhaustedFor: json<readonly number[]>(),
  invalidationKeys: json<readonly string[]>(),
  startedAt: stringField,
  raisedBudget: json<RaisedLimits>(),
  maxReplans: numberField,
  actions: json<readonly RunAction[]>(),
};

export const DEFAULT_RETENTION_SECONDS = DEFAULT_RETENTION_DAYS * 24 * 3600;

/** The statuses a run ends in. A paused run waits for a person, who may still resume it: it does not expire. */
const ENDED_STATUSES: ReadonlySet<RunStatus> = new Set(['complete', 'failed', 'cancelled']);

const epochSeconds = (iso: string | undefined): number => {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
};

/**
 * When an ended run's item expires (`retentionSeconds` after it ended); undefined while it has not ended. Only the
 * run item is stamped, by the write that ends the run (its projection writes the whole item anyway): the run's other
 * items go when it goes (dynamo-retention.ts), so a reopened or long-paused run never loses part of itself.
 */
export function runExpiresAt(
  run: Pick<RunRecord, 'status' | 'terminal' | 'updatedAt'>,
  retentionSeconds: number,
): number | undefined {
  if (!ENDED_STATUSES.has(run.status)) return undefined;
  return epochSeconds(run.terminal?.at ?? run.updatedAt) + retentionSeconds;
}

/** The run's item: its keys, its entries in the runs listing and the listing by status, its expiry once ended. */
export function encodeRun(run: RunRecord, retentionSeconds = DEFAULT_RETENTION_SECONDS): Item {
  const keys = {
    ...itemKeys.run(run.runId),
    ...indexKeys.run(tenantOf(run), run.createdAt, run.runId),
    ...indexKeys.runByStatus(tenantOf(run), run.status, run.createdAt, run.runId),
  };
  const expiresAt = runExpiresAt(run, retentionSeconds);
  return {
    ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'run' }),
    ...(expiresAt === undefined ? {} : { [TTL_ATTRIBUTE]: { N: String(expiresAt) } }),
    ...encodeFields(runCodecs, run),
  };
}

export const decodeRun = (item: Item): RunRecord =>
  decodeFields(runCodecs, item, ['runId', 'status', 'objective', 'revision', 'createdAt', 'updatedAt', 'replans']);

// plan revisions

export interface PlanRevisionRecord {
  readonly runId: string;
  readonly revision: number;
  readonly plan: Plan;
  readonly reason: string;
  readonly createdAt: string;
}

const planRevisionCodecs: FieldCodecs<PlanRevisionRecord> = {
  runId: stringField,
  revision: numberField,
  plan: json<Plan>(),
  reason: stringField,
  createdAt: stringField,
};

export function encodePlanRevision(record: PlanRevisionRecord): Item {
  const keys = itemKeys.planRevision(record.runId, record.revision);
  return { ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'plan' }), ...encodeFields(planRevisionCodecs, record) };
}

/** Listing reads only these (the plan itself can be hundreds of KB). */
export const PLAN_SUMMARY_FIELDS = ['revision', 'reason', 'createdAt'] as const;

export const decodePlanSummary = (item: Item): Omit<PlanRevisionRecord, 'runId' | 'plan'> => {
  const { revision, reason, createdAt } = decodeFields(planRevisionCodecs, item, [...PLAN_SUMMARY_FIELDS]);
  return { revision, reason, createdAt };
};

export const decodePlanRevision = (item: Item): PlanRevisionRecord =>
  decodeFields(planRevisionCodecs, item, ['runId', 'revision', 'plan', 'reason', 'createdAt']);

// steps

export const stepCodecs: FieldCodecs<StepRecord> = {
  runId: stringField,
  stepId: stringField,
  status: enumField(STEP_STATUSES),
  generation: numberField,
  upstream: stringListField,
  remaining: numberField,
  released: stringSetField,
  attempts: numberField,
  output: json<unknown>(),
  error: nullableError,
  confidence: nullableNumber,
  trace: traceField,
  startedAt: stringField,
  finishedAt: stringField,
  updatedAt: stringField,
  claimedBy: stringField,
  history: json<readonly StepGenerationRecord[]>(),
  generationKey: stringField,
  staleReleases: numberMapField,
  usageTokens: numberField,
  usageCostUsd: numberField,
  compensation: json<CompensationRecord>(),
};

/** A step's item; `shards`: its run's step partitions (table-layout.ts). */
export function encodeStep(step: StepRecord, shards = 1): Item {
  const keys = itemKeys.step(step.runId, step.stepId, shards);
  return { ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'step' }), ...encodeFields(stepCodecs, step) };
}

export const decodeStep = (item: Item): StepRecord =>
  decodeFields(stepCodecs, item, ['runId', 'stepId', 'status', 'generation', 'remaining', 'attempts', 'updatedAt']);

// attempts

const attemptCodecs: FieldCodecs<AttemptRecord> = {
  runId: stringField,
  stepId: stringField,
  generation: numberField,
  attempt: numberField,
  target: stringField,
  startedAt: stringField,
  finishedAt: stringField,
  outcome: enumField(['running', 'succeeded', 'failed'] as const),
  input: json<unknown>(),
  output: json<unknown>(),
  confidence: nullableNumber,
  error: nullableError,
  evidence: json<Readonly<Record<string, unknown>>>(),
  usage: json<ModelUsage>(),
  revision: numberField,
  verdict: enumField(['pass', 'review', 'fail'] as const),
};

/** An attempt's item, in its step's partition (`shards`: its run's step partitions). */
export function encodeAttempt(attempt: AttemptRecord, shards = 1): Item {
  const keys = itemKeys.attempt(attempt.runId, attempt.stepId, attempt.generation, attempt.attempt, shards);
  return { ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'attempt' }), ...encodeFields(attemptCodecs, attempt) };
}

export const decodeAttempt = (item: Item): AttemptRecord =>
  decodeFields(attemptCodecs, item, [
    'runId',
    'stepId',
    'generation',
    'attempt',
    'target',
    'startedAt',
    'outcome',
    'evidence',
  ]);

/**
 * The step item's attribute holding the record of an attempt its transition ended (StepPatch.attemptRecord): one
 * JSON string, so a large one goes out of line like any other value, read back through the attempt codecs. What
 * the step item holds already is not written twice: run, step and generation always come from the item (a new
 * generation moves the record to an item of its own first), the output and confidence when the same write gives
 * the step the same values (named in `fromStep`; a step's output does not change while it carries the record).
 * So the record adds its input, evidence and times to the item, which mostly stays within one write unit (1 KB).
 */
export const CARRIED_ATTEMPT_ATTRIBUTE = 'attemptRecord';

const SHARED_WITH_STEP = ['output', 'confidence'] as const;
type SharedField = (typeof SHARED_WITH_STEP)[number];

export function encodeCarriedAttempt(
  attempt: AttemptRecord,
  step: Partial<Pick<StepRecord, SharedField>>,
): AttributeValue {
  const { runId: _run, stepId: _step, generation: _generation, ...own } = attempt;
  const record: Record<string, unknown> = { ...own };
  const fromStep: SharedField[] = [];
  for (const field of SHARED_WITH_STEP) {
    const value = attempt[field];
    if (value !== undefined && step[field] !== undefined && JSON.stringify(value) === JSON.stringify(step[field])) {
      delete record[field];
      fromStep.push(field);
    }
  }
  return { S: JSON.stringify(fromStep.length === 0 ? record : { ...record, fromStep }) };
}

/** The attempt record a step item carries, if any. */
export function carriedAttempt(item: Item | undefined): AttemptRecord | undefined {
  const value = item?.[CARRIED_ATTEMPT_ATTRIBUTE];
  if (item === undefined || value === undefined) return undefined;
  const { fromStep, ...own } = json<Record<string, unknown> & { fromStep?: SharedField[] }>().decode(
    value,
    CARRIED_ATTEMPT_ATTRIBUTE,
  );
  const step = decodeFields(stepCodecs, item, ['runId', 'stepId', 'generation']);
  const shared = Object.fromEntries((fromStep ?? []).map((field) => [field, step[field]]));
  const record = { ...own, ...shared, runId: step.runId, stepId: step.stepId, generation: step.generation };
  // Through the attempt codecs both ways: a carried record is checked and shaped exactly as one of its own item.
  return decodeAttempt(encodeFields(attemptCodecs, record as Partial<AttemptRecord>));
}

// events

const eventCodecs: FieldCodecs<RunEventRecord> = {
  runId: stringField,
  seq: stringField,
  type: stringField,
  at: stringField,
  stepId: stringField,
  generation: numberField,
  detail: json<Readonly<Record<string, unknown>>>(),
};

export function encodeEvent(event: RunEventRecord): Item {
  const keys = itemKeys.event(event.runId, event.seq);
  return { ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'event' }), ...encodeFields(eventCodecs, event) };
}

export const decodeEvent = (item: Item): RunEventRecord =>
  decodeFields(eventCodecs, item, ['runId', 'seq', 'type', 'at', 'detail']);

// approvals

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'edited', 'expired'] as const;

export const approvalCodecs: FieldCodecs<ApprovalRecord> = {
  approvalId: stringField,
  tenant: stringField,
  runId: stringField,
  stepId: stringField,
  generation: numberField,
  kind: enumField(['approval', 'review', 'revision'] as const),
  status: enumField(APPROVAL_STATUSES),
  question: stringField,
  input: json<unknown>(),
  upstreamOutputs: json<Readonly<Record<string, unknown>>>(),
  heldOutput: json<unknown>(),
  heldConfidence: nullableNumber,
  heldRevision: json<HeldRevision>(),
  taskToken: stringField,
  createdAt: stringField,
  deadline: stringField,
  decidedAt: stringField,
  decidedBy: stringField,
  comment: stringField,
  output: json<unknown>(),
};

/**
 * An approval stays readable for the retention after its deadline, then TTL (deployed tables; the embedded sweep)
 * removes it; its run's expiry removes it too, through the run's reference (dynamo-retention.ts).
 */
export function approvalExpiresAt(deadline: string, retentionSeconds = DEFAULT_RETENTION_SECONDS): number {
  return epochSeconds(deadline) + retentionSeconds;
}

export function encodeApproval(approval: ApprovalRecord, retentionSeconds = DEFAULT_RETENTION_SECONDS): Item {
  const keys = {
    ...itemKeys.approval(approval.approvalId),
    ...indexKeys.approval(tenantOf(approval), approval.status, approval.createdAt, approval.approvalId),
  };
  return {
    ...stringItem({ ...keys, [ENTITY_ATTRIBUTE]: 'approval' }),
    [TTL_ATTRIBUTE]: { N: String(approvalExpiresAt(approval.deadline, retentionSeconds)) },
    ...encodeFields(approvalCodecs, approval),
  };
}

export const decodeApproval = (item: Item): ApprovalRecord =>
  decodeFields(approvalCodecs, item, [
    'approvalId',
    'runId',
    'stepId',
    'generation',
    'kind',
    'status',
    'question',
    'taskToken',
    'createdAt',
    'deadline',
  ]);

// idempotency

export const IDEMPOTENCY_STATUSES = ['in_progress', 'completed'] as const;

const idempotencyCodecs: FieldCodecs<{
  key: string;
  status: IdempotencyRecord['status'];
  expiresAt: number;
  result: unknown;
}> = {
  key: stringField,
  status: enumField(IDEMPOTENCY_STATUSES),
  expiresAt: numberField,
  result: json<unknown>(),
};

export function decodeIdempotency(item: Item): IdempotencyRecord {
  const { key, status, expiresAt, result } = decodeFields(idempotencyCodecs, item, ['key', 'status', 'expiresAt']);
  return status === 'in_progress' ? { key, status, expiresAt } : { key, status, result, expiresAt };
}

/** Plain string attributes (keys, entity markers). */
export function stringItem(fields: Readonly<Record<string, string>>): Item {
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, { S: value }]));
}
