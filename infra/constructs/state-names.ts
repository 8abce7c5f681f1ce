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
  /** Wait: FailRun or FinalizeRun outlasted its Retry on the platform's errors; tried again after a while. */
  failRunAgain: 'FailRunAgain',
  finalizeRunAgain: 'FinalizeRunAgain',
  /** Fail: FailRun or FinalizeRun failed for good (not the platform): the execution fails, alarmed. */
  runNotRecorded: 'RunNotRecorded',
  runDone: 'RunDone',
} as const;

export const STEP_STATES = {
  /** Task (StepExecutor): claim, call, verify, complete; answers `$.next` (done, retry, await). */
  runStep: 'RunStep',
  /** Choice on `$.next.action`. */
  route: 'Route',
  backoff: 'Backoff',
  /** Callback (Coordinator requestApproval): a person's decision on a gate or a review, into `$.decision`. */
  awaitDecision: 'AwaitDecision',
  decisionExpired: 'DecisionExpired',
  /** Pass: a failed wait (SendTaskFailure, Lambda error) as `$.failure`, a permanent `E_GATE` error. */
  gateFailed: 'GateFailed',
  /** Pass: a RunStep that failed for good as `$.failure`, a retryable `E_EXECUTOR` error of an unknown attempt. */
  executorFailed: 'ExecutorFailed',
  /** Task (Coordinator): a failed attempt recorded; answers `$.next` like RunStep. */
  recordFailure: 'RecordFailure',
  /** Wait: RecordFailure or DecisionExpired outlasted its Retry on the platform's errors; tried again after a while. */
  recordFailureAgain: 'RecordFailureAgain',
  decisionExpiredAgain: 'DecisionExpiredAgain',
  /** Fail: RecordFailure or DecisionExpired failed for good (not the platform): the execution fails, alarmed. */
  stepNotRecorded: 'StepNotRecorded',
  stepDone: 'StepDone',
} as const;

/**
 * The two states of a Task's wait for capacity (state-machines.ts `waitForCapacity`): a Pass that draws the jittered
 * wait into `$.capacity.seconds`, then the Wait, after which the Task is tried again. Named after the Task.
 */
export const capacityStates = (task: string) => ({ draw: `${task}CapacityDraw`, wait: `${task}CapacityWait` }) as const;

/** The Tasks that wait for capacity instead of failing when the platform's errors outlast their Retry. */
export const CAPACITY_TASKS = [
  RUN_STATES.planRun,
  RUN_STATES.validatePlan,
  RUN_STATES.rejectPlan,
  RUN_STATES.startRun,
  RUN_STATES.awaitRunFinished,
  STEP_STATES.runStep,
  STEP_STATES.awaitDecision,
] as const;

/** Construct ids of the Lambda functions under the `Functions` construct: the function keys of the local runtime. */
export const FUNCTION_KEYS = [
  'Planner',
  'Validator',
  'Coordinator',
  'StepExecutor',
  'Api',
  'Invalidator',
  'Replanner',
  'Outbox',
  'Decider',
] as const;
export type FunctionKey = (typeof FUNCTION_KEYS)[number];

/** Construct ids of the two state machines (under `StateMachines`): how the local runtime tells them apart. */
export const MACHINE_IDS = { run: 'RunMachine', step: 'StepMachine' } as const;
