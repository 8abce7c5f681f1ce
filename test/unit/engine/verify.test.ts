import { describe, expect, it } from 'vitest';
import {
  candidateOutput,
  decideExpectedFailure,
  decideVerdict,
  judgedConfidence,
  meetsConfidence,
  VERIFY_ERROR_CODES,
} from '../../../shared/engine/verify.ts';

const ok = { ok: true } as const;

describe('decideVerdict', () => {
  it('passes a result that meets its contract, assertion and threshold', () => {
    expect(
      decideVerdict({ contract: ok, assertion: { ok: true, value: true }, confidence: 0.9, confidenceThreshold: 0.8 }),
    ).toEqual({ verdict: 'pass' });
  });

  it('fails an output that breaks the contract, permanently', () => {
    const verdict = decideVerdict({ contract: { ok: false, errors: ['/x must be string'] } });
    expect(verdict).toMatchObject({ verdict: 'fail', error: { code: VERIFY_ERROR_CODES.contract, retryable: false } });
  });

  it('fails when the success assertion is anything but true', () => {
    for (const value of [false, undefined, 'yes', 1])
      expect(decideVerdict({ contract: ok, assertion: { ok: true, value } })).toMatchObject({
        verdict: 'fail',
        error: { code: VERIFY_ERROR_CODES.assertion },
      });
  });

  it('fails with E_EXPRESSION_LIMIT, permanently, when the success assertion hit a bound of the sandbox', () => {
    expect(decideVerdict({ contract: ok, assertion: { ok: false, message: 'timeout', limit: true } })).toMatchObject({
      verdict: 'fail',
      error: { code: 'E_EXPRESSION_LIMIT', retryable: false },
    });
  });

  it('fails when the success assertion cannot be evaluated', () => {
    expect(decideVerdict({ contract: ok, assertion: { ok: false, message: 'boom' } })).toMatchObject({
      verdict: 'fail',
      error: { code: VERIFY_ERROR_CODES.assertionError },
    });
  });

  it('sends a result below the confidence threshold to review', () => {
    expect(decideVerdict({ contract: ok, confidence: 0.4, confidenceThreshold: 0.8 }).verdict).toBe('review');
    expect(decideVerdict({ contract: ok, confidence: null, confidenceThreshold: 0.8 }).verdict).toBe('review');
  });

  it('does not review again once a person decided', () => {
    expect(
      decideVerdict({ decision: { decision: 'approve' }, contract: ok, confidence: 0.1, confidenceThreshold: 0.8 }),
    ).toEqual({ verdict: 'pass' });
  });

  it('fails a rejection permanently, whatever else holds', () => {
    const verdict = decideVerdict({ decision: { decision: 'reject', by: 'ana', comment: 'no' }, contract: ok });
    expect(verdict).toMatchObject({ verdict: 'fail', error: { code: 'E_REJECTED', retryable: false } });
    if (verdict.verdict === 'fail') expect(verdict.error.message).toContain('ana');
  });

  it('checks the contract before the confidence', () => {
    expect(
      decideVerdict({ contract: { ok: false, errors: ['bad'] }, confidence: 0.1, confidenceThreshold: 0.9 }).verdict,
    ).toBe('fail');
  });
});

describe('candidateOutput', () => {
  it('takes the executed result without a decision', () => {
    expect(candidateOutput({ kind: 'tool', result: { output: { a: 1 } } })).toEqual({
      ok: true,
      output: { a: 1 },
      source: 'result',
    });
  });

  it('gives an approved human gate { approved: true } or the output it was given', () => {
    expect(candidateOutput({ kind: 'human', decision: { decision: 'approve' } })).toMatchObject({
      output: { approved: true },
      source: 'approval',
    });
    expect(candidateOutput({ kind: 'human', decision: { decision: 'approve', output: { x: 1 } } })).toMatchObject({
      output: { x: 1 },
    });
  });

  it('keeps the held result when a review is approved and replaces it on an edit', () => {
    const result = { output: { draft: 'v1' } };
    expect(candidateOutput({ kind: 'agent', decision: { decision: 'approve' }, result })).toMatchObject({
      output: { draft: 'v1' },
      source: 'result',
    });
    expect(
      candidateOutput({ kind: 'agent', decision: { decision: 'edit', output: { draft: 'v2' } }, result }),
    ).toMatchObject({ output: { draft: 'v2' }, source: 'decision' });
  });

  it('refuses an edit without an output and a missing result', () => {
    expect(candidateOutput({ kind: 'agent', decision: { decision: 'edit' } })).toMatchObject({ ok: false });
    expect(candidateOutput({ kind: 'tool' })).toMatchObject({
      ok: false,
      verdict: { verdict: 'fail', error: { code: VERIFY_ERROR_CODES.noResult } },
    });
  });
});

describe('meetsConfidence', () => {
  it('needs a number at or above the threshold when one is set', () => {
    expect(meetsConfidence(undefined, undefined)).toBe(true);
    expect(meetsConfidence(0.8, 0.8)).toBe(true);
    expect(meetsConfidence(0.79, 0.8)).toBe(false);
    expect(meetsConfidence(Number.NaN, 0)).toBe(false);
  });
});

describe('decideExpectedFailure', () => {
  const failure = (code: string, message: string) => ({
    ok: false as const,
    error: { code, message, retryable: true },
  });

  it('is met by a failure whose code and message match, with that failure as evidence', () => {
    const expected = { code: '^E_HTTP_5', message: 'timed out' };
    expect(decideExpectedFailure({ failure: expected }, failure('E_HTTP_503', 'the call timed out'))).toEqual({
      kind: 'met',
      evidence: { failure: { code: 'E_HTTP_503', message: 'the call timed out' }, expected },
    });
    expect(decideExpectedFailure({ failure: {} }, failure('E_ANY', 'whatever')).kind).toBe('met');
  });

  it('leaves a failure that does not match to the usual policy', () => {
    expect(decideExpectedFailure({ failure: { code: '^E_HTTP_5' } }, failure('E_HTTP_404', 'x'))).toEqual({
      kind: 'other',
    });
    expect(decideExpectedFailure({ failure: { message: 'timed out' } }, failure('E_HTTP_503', 'refused'))).toEqual({
      kind: 'other',
    });
  });

  it('fails a success for good with E_EXPECTED_FAILURE', () => {
    const decided = decideExpectedFailure({ failure: { code: 'E_X' } }, { ok: true, output: { value: 1 } });
    expect(decided).toMatchObject({
      kind: 'unmet',
      verdict: { verdict: 'fail', error: { code: 'E_EXPECTED_FAILURE', retryable: false } },
    });
    expect(decided.kind === 'unmet' && decided.verdict.verdict === 'fail' && decided.verdict.error.message).toMatch(
      /expected the capability to fail with code \/E_X\/, but it succeeded/,
    );
  });
});

describe('decideVerdict with successCriteria.outputSchema', () => {
  it('fails an output that meets the contract but not the stricter criteria schema, before the assertion', () => {
    const verdict = decideVerdict({
      contract: ok,
      criteria: { ok: false, errors: ['/value must be equal to constant'] },
      assertion: { ok: true, value: true },
    });
    expect(verdict).toMatchObject({
      verdict: 'fail',
      error: {
        code: VERIFY_ERROR_CODES.assertion,
        retryable: false,
        details: { errors: ['/value must be equal to constant'] },
      },
    });
    expect(decideVerdict({ contract: ok, criteria: ok })).toEqual({ verdict: 'pass' });
  });
});

describe('judgedConfidence', () => {
  it("counts a tool's answer without a confidence as 1.0, so a threshold on a tool does not send it to a person", () => {
    expect(judgedConfidence('tool:echo', undefined)).toBe(1);
    expect(judgedConfidence('tool:echo', null)).toBe(1);
    expect(
      decideVerdict({ contract: ok, confidence: judgedConfidence('tool:echo', null), confidenceThreshold: 0.9 }),
    ).toEqual({ verdict: 'pass' });
  });

  it('keeps what a tool reported, and leaves an agent without one to review', () => {
    expect(judgedConfidence('tool:echo', 0.2)).toBe(0.2);
    expect(judgedConfidence('agent:writer', undefined)).toBeUndefined();
    expect(judgedConfidence('agent:writer', null)).toBeNull();
    const agent = decideVerdict({
      contract: ok,
      confidence: judgedConfidence('agent:writer', null),
      confidenceThreshold: 0.5,
    });
    expect(agent.verdict).toBe('review');
  });
});
