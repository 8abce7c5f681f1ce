/**
 * Plan format v1: the wire contract. The zod schema here is the single source of truth; the published JSON
 * Schema (`cairn schema`) is generated from it. Structural rules that need the whole plan or the catalog
 * (ids unique, dependencies known, contracts equal, limits) live in validate.ts.
 */
import { z } from 'zod';

export const PLAN_SCHEMA_VERSION = 1;

export const STEP_STATUSES = [
  'pending',
  'ready',
  'running',
  'retrying',
  'awaiting_approval',
  'succeeded',
  'failed',
  'skipped',
  'blocked',
  'superseded',
  'cancelled',
  // A finished mutating step being undone by its capability's compensation (saga), and how that ended.
  'compensating',
  'compensated',
  'compensation_failed',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const RUN_STATUSES = ['queued', 'planning', 'running', 'paused', 'complete', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const SIDE_EFFECTS = ['none', 'idempotent', 'mutating'] as const;
export type SideEffect = (typeof SIDE_EFFECTS)[number];

/** A segment name: steps sharing one are compensated together when one of them fails for good. */
export const SEGMENT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const STEP_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const TARGET_PATTERN = /^(tool|agent|human):[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$/;
/** `"{% <JSONata> %}"`: the whole string is one expression, as in Step Functions' JSONata syntax. */
export const EXPRESSION_PATTERN = /^\{%([\s\S]*)%\}$/;

export const MAX_OBJECTIVE_LENGTH = 4000;
export const MAX_TITLE_LENGTH = 200;
export const DEFAULT_MAX_RETRIES = 3;
/** The longest `rationale` a plan may carry: a planner's reasoning, shown in the `[plan]` trace entries. */
export const MAX_RATIONALE_LENGTH = 2000;
/** The largest `metadata` a step may carry, in bytes of JSON (UTF-8). */
export const MAX_METADATA_BYTES = 4096;
/**
 * The most resources one step may watch, and a whole plan: each watch is a record written with every revision and
 * read on every change of its resource, so an unbounded list would let one plan cost minutes and hundreds of MB.
 */
export const MAX_WATCHES_PER_STEP = 100;
export const MAX_WATCHES_PER_PLAN = 10_000;

const nonBlank = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank' });

const jsonValue = z.json();
const jsonObject = z.record(z.string(), jsonValue);
const expression = z.string().regex(EXPRESSION_PATTERN, { message: 'must be a "{% <JSONata> %}" expression' });

export const stepErrorSchema = z.strictObject({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().optional(),
  details: jsonValue.optional(),
});
export type StepError = z.infer<typeof stepErrorSchema>;

export const successCriteriaSchema = z.strictObject({
  description: z.string(),
  assert: expression.optional(),
  /** A stricter schema than the capability's outputSchema, which the output must also satisfy. */
  outputSchema: jsonObject.optional(),
});

/** The longest pattern of an expected failure (a regular expression over a failure's code or message). */
export const MAX_FAILURE_PATTERN_LENGTH = 500;
const failurePattern = z.string().min(1).max(MAX_FAILURE_PATTERN_LENGTH);

/**
 * An expected-failure checkpoint: the step succeeds only when its capability fails, and fails the way these
 * patterns say (JavaScript regular expressions, unanchored; an absent one matches anything).
 */
export const expectSchema = z.strictObject({
  failure: z.strictObject({ code: failurePattern.optional(), message: failurePattern.optional() }),
});
export type StepExpectation = z.infer<typeof expectSchema>;

/**
 * What a step's final failure does (`onFailure`). `retry-then-fail` (default): retries, then the step fails, its
 * downstream is blocked and the replanner (when on) may revise around it. `continue`: after its retries the failure
 * is accepted: dependents run and see its output as null, and the run may still complete. `pause`: the run is left
 * paused for a person. `replan`: no retries, the first failure goes to the replanner. `fail-run`: the run fails at
 * once, its open steps cancelled, without a replan.
 */
export const FAILURE_POLICIES = ['retry-then-fail', 'continue', 'pause', 'replan', 'fail-run'] as const;
export type FailurePolicy = (typeof FAILURE_POLICIES)[number];

/** What a gate or review does when nobody decides before its timeout: fail the step, or leave the run paused. */
export const APPROVAL_TIMEOUT_POLICIES = ['fail', 'pause'] as const;
export type ApprovalTimeoutPolicy = (typeof APPROVAL_TIMEOUT_POLICIES)[number];

/** A group that may decide an approval: a name the caller's groups claim (or tokens file entry) carries. */
export const APPROVER_GROUP_PATTERN = /^[\x21-\x7e]{1,128}$/;
export const MAX_APPROVER_GROUPS = 20;

/**
 * Who may decide an approval, besides holding the approver role: `approvers`, the groups allowed (any one of them;
 * absent, any approver), and `allowSelf`, whether the subject that started the run may decide it (default false).
 * A catalog entry's rule and a step's both hold: a step narrows its capability's approvers, and may allow
 * self-approval unless its capability says `allowSelf: false` (shared/api/approval-rules.ts).
 */
const approverRules = {
  approvers: z
    .array(z.string().regex(APPROVER_GROUP_PATTERN, { message: 'must be 1..128 visible ASCII characters' }))
    .min(1)
    .max(MAX_APPROVER_GROUPS)
    .optional(),
  allowSelf: z.boolean().optional(),
};

export const approvalSchema = z.strictObject({
  question: nonBlank(2000),
  timeoutSeconds: z.number().int().positive(),
  /** Default 'fail': the step fails (a replan may follow); 'pause': the run is left paused for a person. */
  onTimeout: z.enum(APPROVAL_TIMEOUT_POLICIES).optional(),
  ...approverRules,
});

/** A catalog entry's rule for the approvals of its steps (gates, reviews of its results). */
export const approverRulesSchema = z.strictObject(approverRules);
export type ApproverRules = z.infer<typeof approverRulesSchema>;

/**
 * What a run does when its plan's budget runs out: end `failed` (default), be left `paused` for a person, or ask the
 * replanner once for a cheaper revision (`replan`, see engine/budget-replan.ts; a second exhaustion ends `failed`).
 */
export const BUDGET_EXHAUSTED_POLICIES = ['fail', 'pause', 'replan'] as const;
export type BudgetExhaustedPolicy = (typeof BUDGET_EXHAUSTED_POLICIES)[number];
/** The share of a limit at which BudgetThreshold is published, unless the budget says otherwise. */
export const DEFAULT_BUDGET_WARN_AT = 0.8;

/**
 * Hard limits on what a run (plan-level) or one step spends: tokens and money as reported by its capabilities
 * (shared/engine/budget.ts), wall-clock seconds since it started. `warnAt` is the soft threshold (a share of each
 * limit); `onExhausted` only applies to the plan's budget.
 */
export const budgetSchema = z.strictObject({
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxSeconds: z.number().positive().optional(),
  warnAt: z.number().gt(0).max(1).optional(),
  onExhausted: z.enum(BUDGET_EXHAUSTED_POLICIES).optional(),
});
export type Budget = z.infer<typeof budgetSchema>;

export const planStepSchema = z.strictObject({
  id: z.string().regex(STEP_ID_PATTERN, { message: 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' }),
  title: nonBlank(MAX_TITLE_LENGTH),
  description: z.string().optional(),
  target: z.string().regex(TARGET_PATTERN, { message: 'must be tool:<name>, agent:<name> or human:<name>' }).nullable(),
  parentId: z.string().optional(),
  dependsOn: z.array(z.string()),
  input: jsonValue.optional(),
  when: expression.optional(),
  inputSchema: jsonObject.optional(),
  outputSchema: jsonObject.optional(),
  successCriteria: successCriteriaSchema.optional(),
  expect: expectSchema.optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  onFailure: z.enum(FAILURE_POLICIES).optional(),
  confidenceThreshold: z.number().min(0).max(1).optional(),
  rollbackHint: nonBlank(2000).optional(),
  /**
   * The saga segment the step belongs to: when a step of the segment fails for good (or the run is cancelled with
   * compensation), the segment's finished mutating steps are compensated in reverse completion order.
   */
  segment: z.string().regex(SEGMENT_PATTERN, { message: 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' }).optional(),
  approval: approvalSchema.optional(),
  watches: z.array(z.string().min(1).max(512)).max(MAX_WATCHES_PER_STEP).optional(),
  estimatedDurationSeconds: z.number().min(0).optional(),
  budget: budgetSchema.optional(),
  /** Free-form notes for people and tools (at most MAX_METADATA_BYTES of JSON): kept, shown, never interpreted. */
  metadata: jsonObject.optional(),
  status: z.enum(STEP_STATUSES).optional(),
  result: jsonValue.optional(),
  error: stepErrorSchema.nullable().optional(),
});
export type PlanStep = z.infer<typeof planStepSchema>;

export const planSchema = z.strictObject({
  schemaVersion: z.literal(PLAN_SCHEMA_VERSION),
  revision: z.number().int().min(1),
  objective: nonBlank(MAX_OBJECTIVE_LENGTH),
  budget: budgetSchema.optional(),
  /**
   * Why this plan: the planner's reasoning (the HTN methods chosen and what selected them, or a model's own
   * rationale; for a revision, what it changed and why). Kept with the revision and shown in each step's `[plan]`
   * trace entry; never interpreted.
   */
  rationale: z
    .string()
    .max(MAX_RATIONALE_LENGTH)
    .optional()
    .describe(
      'Why this plan, in a few sentences: why this decomposition and these targets (for a revision: what changed ' +
        'and why). At most 2000 characters.',
    ),
  steps: z.array(planStepSchema).min(1),
});
export type Plan = z.infer<typeof planSchema>;

/**
 * How a capability's effect is undone: the `target` to call, with `input` a JSON template whose `"{% … %}"`
 * expressions see `$input` and `$output` of the step being compensated (evaluated in the expression sandbox).
 */
export const compensationSchema = z.strictObject({
  target: z.string().regex(TARGET_PATTERN),
  input: jsonValue,
});
export type Compensation = z.infer<typeof compensationSchema>;

export const capabilitySchema = z.strictObject({
  target: z.string().regex(TARGET_PATTERN),
  description: z.string(),
  inputSchema: jsonObject,
  outputSchema: jsonObject,
  sideEffect: z.enum(SIDE_EFFECTS),
  alternatives: z.array(z.string().regex(TARGET_PATTERN)).optional(),
  compensate: compensationSchema.optional(),
  approval: approverRulesSchema.optional(),
});
export type Capability = z.infer<typeof capabilitySchema>;

export const catalogSchema = z.strictObject({ capabilities: z.array(capabilitySchema) });
export type CatalogDocument = z.infer<typeof catalogSchema>;

/** A step's kind, read from its target prefix; groups have no target. */
export type StepKind = 'tool' | 'agent' | 'human' | 'group';
export const stepKind = (step: Pick<PlanStep, 'target'>): StepKind =>
  step.target === null ? 'group' : (step.target.slice(0, step.target.indexOf(':')) as StepKind);

/** The JSON Schema (Draft 2020-12) of plan format v1, generated from the zod schema. */
export function planJsonSchema(): Record<string, unknown> {
  // Converted once: each plan and replan request hands it to the model, and the conversion takes ~30 ms of CPU.
  jsonSchema ??= deepFreeze({
    ...z.toJSONSchema(planSchema, { target: 'draft-2020-12', unrepresentable: 'any' }),
    $id: 'https://cairn.dev/schemas/plan-v1.json',
    title: 'cairn plan (format v1)',
  });
  return jsonSchema;
}
let jsonSchema: Record<string, unknown> | undefined;

/** Shared by every caller, so no one may change it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
