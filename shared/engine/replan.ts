/**
 * Replanning, the pure part (issue 4): the failure diagnosis and the bounded history a planner gets, the scope a
 * replan may change and the check that it kept to it, the new revision, the diff between revisions, and the budget
 * and no-progress decision. The HTN replanner lives in planner/replan.
 */
export { type AppliedReplan, type ApplyReplanOptions, applyReplan } from './replan/apply.ts';
export { DEFAULT_MAX_REPLANS, decideReplan, type ReplanBudget, type ReplanDecision } from './replan/decide.ts';
export {
  type DiagnoseInput,
  diagnoseFailure,
  type FailedStepView,
  triggerFor,
} from './replan/diagnosis.ts';
export { diffPlans, type PlanDiff, type StepChange } from './replan/diff.ts';
export {
  type FailureFingerprintInput,
  failureFingerprint,
  type LineageMap,
  mergeLineage,
  normalizeErrorMessage,
  stepLineage,
} from './replan/fingerprint.ts';
export { type HistoryOptions, type HistoryStepView, summarizeHistory } from './replan/history.ts';
export {
  checkReplan,
  frozenSteps,
  REPLAN_ISSUE_CODES,
  type ReplanIssue,
  type ReplanIssueCode,
  type ReplanScope,
  replanScope,
  requestScope,
} from './replan/scope.ts';
export {
  changedFields,
  isFinishedStatus,
  pendingPlan,
  type StepStates,
  type StepStateView,
  stateOf,
  statusOf,
  stepStates,
  stripLifecycle,
  withoutLifecycle,
} from './replan/step-definition.ts';
