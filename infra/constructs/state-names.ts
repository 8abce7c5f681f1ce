/**
 * State names of the two state machines. The CDK constructs name their states with these constants and the embedded
 * runtime finds Task and Wait states by them, so a rename can never split the deployed and the local behaviour.
 */
export const RUN_STATES = {
  /** Choice, the first state: `$.resume` true (a reopened run) → PrepareAwait, else PlanRun. */
  resumeOrPlan: 'ResumeOrPlan',
  planRun: 'PlanRun',
  validatePlan: 'ValidatePlan',
  isPlanValid: 'IsPlanValid',
  rejectPlan: 'RejectPlan',
  startRun: 'StartRun',
  /** Pass: `$.outcome = { timedOut: null, error: null }`; the waiter's catches fill one of them in. */
  prepareAwait: 'PrepareAwait',
  awaitRunFinished: 'AwaitRunFinished',
  finalizeRun: 'FinalizeRun',
  failRun: 'FailRun',
  runDone: 'RunDone',
} as const;

export const STEP_STATES = {
  claimStep: 'ClaimStep',
  routeStep: 'RouteStep',
  executeStep: 'ExecuteStep',
  /** Pass: shapes a caught executor error as `$.exec = { ok: false, error: { code: 'E_EXECUTOR', ... } }`. */
  executorFailed: 'ExecutorFailed',
  executionOk: 'ExecutionOk',
  /** Pass: `$.decision = null` before verifying an executed output, so no stale human decision is verified. */
  clearDecision: 'ClearDecision',
  recordFailure: 'RecordFailure',
  shouldRetry: 'ShouldRetry',
  backoff: 'Backoff',
  prepareRetry: 'PrepareRetry',
  awaitApproval: 'AwaitApproval',
  approvalExpired: 'ApprovalExpired',
  /** Pass: shapes a failed approval/review wait (SendTaskFailure, Lambda error) as a permanent `E_GATE` error. */
  gateFailed: 'GateFailed',
  verifyStep: 'VerifyStep',
  verifyVerdict: 'VerifyVerdict',
  /** Pass: copies `$.verify.error` to `$.exec` so `RecordFailure` reads one place. */
  verifyFailed: 'VerifyFailed',
  awaitReview: 'AwaitReview',
  reviewExpired: 'ReviewExpired',
  completeStep: 'CompleteStep',
  stepDone: 'StepDone',
} as const;

/** Construct ids of the Lambda functions under the `Functions` construct: the function keys of the local runtime. */
export const FUNCTION_KEYS = [
  'Planner',
  'Validator',
  'Coordinator',
  'StepExecutor',
  'Api',
  'Invalidator',
  'Replanner',
] as const;
export type FunctionKey = (typeof FUNCTION_KEYS)[number];

/** Construct ids of the two state machines (under `StateMachines`): how the local runtime tells them apart. */
export const MACHINE_IDS = { run: 'RunMachine', step: 'StepMachine' } as const;
