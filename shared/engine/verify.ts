/**
 * The verdict on a step's result before it may succeed: the output against the capability's `outputSchema`, the
 * step's `successCriteria.assert`, the self-reported confidence against `confidenceThreshold`, and for a person's
 * decision (human gate or review) approve / reject / edit. Pure: the checks are run by the caller and passed in.
 */
import { ExpressionLimitError } from '../errors.ts';
import { boundIssues, clipMessage, joinIssues } from '../plan/bounded-text.ts';
import { contractIssues, contractValidator } from '../plan/contracts.ts';
import type { PlanStep, StepError, StepExpectation } from '../plan/schema.ts';

export type ContractResult = { readonly ok: true } | { readonly ok: false; readonly errors: readonly string[] };

/** The outcome of evaluating `successCriteria.assert` (absent when the step has none). */
export type AssertionResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string; readonly limit?: boolean };

export interface HumanDecision {
  readonly decision: 'approve' | 'reject' | 'edit';
  readonly output?: unknown;
  readonly comment?: string | undefined;
  readonly by?: string | undefined;
}

export type Verdict =
  | { readonly verdict: 'pass' }
  | { readonly verdict: 'review'; readonly reason: string }
  | { readonly verdict: 'fail'; readonly error: StepError };

export const VERIFY_ERROR_CODES = {
  rejected: 'E_REJECTED',
  // The one code of an output that breaks its contract (the input's counterpart is E_INPUT_SCHEMA, at the claim).
  contract: 'E_OUTPUT_SCHEMA',
  assertion: 'E_ASSERTION_FAILED',
  assertionError: 'E_ASSERTION_ERROR',
  editWithoutOutput: 'E_EDIT_WITHOUT_OUTPUT',
  noResult: 'E_NO_RESULT',
  // The assertion hit a bound of the expression sandbox (time, depth, size, memory): the same code as at the claim.
  expressionLimit: ExpressionLimitError.code,
  // The step expected its capability to fail, and it succeeded.
  expectedFailure: 'E_EXPECTED_FAILURE',
} as const;

/**
 * A failing verdict, its message bounded (plan/bounded-text.ts): it quotes the output's contract errors, the
 * assertion's own error (`$error(...)` says anything) and a person's comment, and it is stored with the step.
 */
const fail = (code: string, text: string, details?: StepError['details']): Verdict => {
  const message = clipMessage(text);
  return {
    verdict: 'fail',
    // a verdict does not change when asked again with the same result: never worth a retry
    error: details === undefined ? { code, message, retryable: false } : { code, message, retryable: false, details },
  };
};

export type CandidateOutput =
  | { readonly ok: true; readonly output: unknown; readonly source: 'result' | 'decision' | 'approval' }
  | { readonly ok: false; readonly verdict: Verdict };

/**
 * The output a step would succeed with. Without a decision: the executed result. A human gate approved without an
 * output yields `{ approved: true }`; a review approval keeps the held result; an edit replaces it (and must bring
 * one); a rejection has none.
 */
export function candidateOutput(input: {
  readonly kind: 'tool' | 'agent' | 'human';
  readonly decision?: HumanDecision | undefined;
  readonly result?: { readonly output: unknown } | undefined;
}): CandidateOutput {
  const { kind, decision, result } = input;
  if (decision?.decision === 'reject') {
    const by = decision.by ? ` by ${decision.by}` : '';
    const comment = decision.comment ? `: ${decision.comment}` : '';
    return { ok: false, verdict: fail(VERIFY_ERROR_CODES.rejected, `rejected${by}${comment}`) };
  }
  if (decision?.decision === 'edit') {
    if (decision.output === undefined)
      return { ok: false, verdict: fail(VERIFY_ERROR_CODES.editWithoutOutput, 'an edit must supply an output') };
    return { ok: true, output: decision.output, source: 'decision' };
  }
  if (kind === 'human' && decision?.decision === 'approve') {
    return decision.output === undefined
      ? { ok: true, output: { approved: true }, source: 'approval' }
      : { ok: true, output: decision.output, source: 'decision' };
  }
  if (result === undefined)
    return { ok: false, verdict: fail(VERIFY_ERROR_CODES.noResult, 'no result was recorded for this attempt') };
  return { ok: true, output: result.output, source: 'result' };
}

/** What a tool's answer without a confidence counts as: a tool does what it says; an agent states its own. */
export const TOOL_DEFAULT_CONFIDENCE = 1;

/** The confidence an attempt's answer is judged by: the one it reported, else 1.0 for a tool (none for an agent). */
export const judgedConfidence = (target: string, reported: number | null | undefined): number | null | undefined =>
  reported ?? (target.startsWith('tool:') ? TOOL_DEFAULT_CONFIDENCE : reported);

/** Whether a confidence clears a threshold; a missing confidence never clears a threshold that is set. */
export function meetsConfidence(confidence: number | null | undefined, threshold: number | undefined): boolean {
  if (threshold === undefined) return true;
  return typeof confidence === 'number' && Number.isFinite(confidence) && confidence >= threshold;
}

/**
 * The verdict, first rule that applies: a rejection fails; an output that breaks the contract fails; one that breaks
 * the criteria's stricter schema fails; a success assertion that does not hold (anything but `true`) or cannot be evaluated fails; without a person's decision, a
 * confidence below the threshold goes to review (a decision has already been that review); otherwise pass.
 */
export function decideVerdict(input: {
  readonly decision?: HumanDecision | undefined;
  readonly contract: ContractResult;
  /** The output against `successCriteria.outputSchema` (absent when the step has none). */
  readonly criteria?: ContractResult | undefined;
  readonly assertion?: AssertionResult | undefined;
  readonly confidence?: number | null | undefined;
  readonly confidenceThreshold?: number | undefined;
}): Verdict {
  const { decision, contract, assertion } = input;
  if (decision?.decision === 'reject') {
    const by = decision.by ? ` by ${decision.by}` : '';
    return fail(VERIFY_ERROR_CODES.rejected, `rejected${by}${decision.comment ? `: ${decision.comment}` : ''}`);
  }
  if (!contract.ok)
    return fail(VERIFY_ERROR_CODES.contract, `output does not match the outputSchema: ${joinIssues(contract.errors)}`, {
      errors: boundIssues(contract.errors),
    });
  // A criterion that does not hold, whether a schema or an assertion, is one failure: the success check failed.
  if (input.criteria !== undefined && !input.criteria.ok)
    return fail(
      VERIFY_ERROR_CODES.assertion,
      `the output does not meet successCriteria.outputSchema: ${joinIssues(input.criteria.errors)}`,
      { errors: boundIssues(input.criteria.errors) },
    );
  if (assertion !== undefined) {
    if (!assertion.ok && assertion.limit === true)
      return fail(VERIFY_ERROR_CODES.expressionLimit, `the success assertion hit a limit: ${assertion.message}`);
    if (!assertion.ok)
      return fail(
        VERIFY_ERROR_CODES.assertionError,
        `the success assertion could not be evaluated: ${assertion.message}`,
      );
    if (assertion.value !== true)
      return fail(
        VERIFY_ERROR_CODES.assertion,
        `the success assertion does not hold (got ${describe(assertion.value)})`,
      );
  }
  if (decision === undefined && !meetsConfidence(input.confidence, input.confidenceThreshold)) {
    const got = typeof input.confidence === 'number' ? String(input.confidence) : 'none';
    return { verdict: 'review', reason: `confidence ${got} is below the threshold ${input.confidenceThreshold}` };
  }
  return { verdict: 'pass' };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The failure an expected-failure step records as its output (what dependents read) and its evidence. */
export interface ExpectedFailureEvidence {
  readonly failure: { readonly code: string; readonly message: string };
  readonly expected: { readonly code?: string; readonly message?: string };
}

/**
 * What an attempt's answer means to a step with `expect.failure`: a failure whose code and message match the
 * patterns (unanchored regular expressions; an absent one matches anything) is the step's success, with that
 * failure as output and evidence; a success is a permanent E_EXPECTED_FAILURE; any other failure stays what it is
 * (retried or final by the usual policy), so a transient error does not pass for the expected one.
 */
export function decideExpectedFailure(
  expectation: StepExpectation,
  answer: { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly error: StepError },
):
  | { readonly kind: 'met'; readonly evidence: ExpectedFailureEvidence }
  | { readonly kind: 'unmet'; readonly verdict: Verdict }
  | { readonly kind: 'other' } {
  const expected = expectation.failure;
  if (answer.ok) {
    return {
      kind: 'unmet',
      verdict: fail(
        VERIFY_ERROR_CODES.expectedFailure,
        `expected the capability to fail${describeExpected(expected)}, but it succeeded (output ${describe(answer.output)})`,
        { expected: { ...expected } },
      ),
    };
  }
  const { code, message } = answer.error;
  const matches = (pattern: string | undefined, text: string) =>
    pattern === undefined || new RegExp(pattern).test(text);
  if (!matches(expected.code, code) || !matches(expected.message, message)) return { kind: 'other' };
  return { kind: 'met', evidence: { failure: { code, message }, expected: { ...expected } } };
}

function describeExpected(expected: StepExpectation['failure']): string {
  const parts = [
    expected.code === undefined ? '' : `code /${expected.code}/`,
    expected.message === undefined ? '' : `message /${expected.message}/`,
  ].filter((p) => p.length > 0);
  return parts.length === 0 ? '' : ` with ${parts.join(' and ')}`;
}

/** The output against `successCriteria.outputSchema`; undefined when the step has none. */
export function checkCriteriaSchema(planStep: PlanStep, output: unknown): ContractResult | undefined {
  const schema = planStep.successCriteria?.outputSchema;
  if (schema === undefined) return undefined;
  const validateFn = contractValidator(schema);
  if (validateFn(output)) return { ok: true };
  return { ok: false, errors: contractIssues(validateFn.errors) };
}
