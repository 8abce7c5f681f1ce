import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_REPLANS,
  decideReplan,
  failureFingerprint,
  mergeLineage,
  normalizeErrorMessage,
  stepLineage,
} from '../../../shared/engine/replan.ts';

describe('normalizeErrorMessage', () => {
  it.each([
    [
      'Request 3f1c2a9e-8b7d-4c6e-9f00-1234567890ab to https://search.example.com/v2 timed out after 30012 ms',
      'request <uuid> to https://search.example.com/v<n> timed out after <n> ms',
    ],
    ['HTTP 429: Too Many Requests (retry after 2.5s)', 'http <n>: too many requests (retry after <n>s)'],
    ["Can't fetch 'https://acme.com/pricing': status 403", "can't fetch <str>: status <n>"],
    ['Item "acme-report-7" not found at 2025-03-01T10:15:30.123Z', 'item <str> not found at <time>'],
    ['checksum mismatch: expected 9f86d081884c7d65 got 0x1A2B', 'checksum mismatch: expected <hex> got <hex>'],
    ['  line one\n\tline   two  ', 'line one line two'],
  ])('masks what varies in %j', (message, normalized) => {
    expect(normalizeErrorMessage(message)).toBe(normalized);
  });
});

describe('failureFingerprint', () => {
  const throttled = (requestId: string, at: string) =>
    `ThrottlingException: Rate exceeded for request ${requestId} at ${at} (attempt 3 of 4)`;

  it('is equal for the same failure seen again, with other ids, times and numbers', () => {
    const first = failureFingerprint({
      lineage: 'research.acme.search',
      code: 'E_CAPABILITY_THROTTLED',
      message: throttled('6e0b8a52-0c8f-4a7f-bb0e-0f2f6d5d2a11', '2025-03-01T10:00:00Z'),
    });
    const again = failureFingerprint({
      lineage: 'research.acme.search',
      code: 'E_CAPABILITY_THROTTLED',
      message: throttled('0d9f6c1b-77aa-4e3c-9a1e-6b5c4d3e2f10', '2025-03-01T10:07:42Z'),
    });
    expect(again).toBe(first);
    expect(first.startsWith('research.acme.search|E_CAPABILITY_THROTTLED|')).toBe(true);
  });

  it('differs when the step lineage, the code or the message itself differs', () => {
    const base = { lineage: 'fetch', code: 'E_HTTP', message: 'status 403 forbidden' };
    const fingerprint = failureFingerprint(base);
    expect(failureFingerprint({ ...base, lineage: 'search' })).not.toBe(fingerprint);
    expect(failureFingerprint({ ...base, code: 'E_TIMEOUT' })).not.toBe(fingerprint);
    expect(failureFingerprint({ ...base, message: 'status 403 access denied' })).not.toBe(fingerprint);
  });
});

describe('stepLineage', () => {
  it('is the step id unless replaces links lead back to an earlier step', () => {
    expect(stepLineage('fetch')).toBe('fetch');
    const lineage = mergeLineage({ snippets: 'fetch' }, { digest: 'snippets' });
    expect(stepLineage('digest', lineage)).toBe('fetch');
    expect(stepLineage('other', lineage)).toBe('other');
  });

  it('stops on a cycle of links', () => {
    expect(stepLineage('a', { a: 'b', b: 'a' })).toBe('b');
  });
});

describe('decideReplan', () => {
  const fingerprint = 'fetch|E_HTTP|0011';

  it('replans while under the budget and the failure is new', () => {
    expect(decideReplan({ replansSoFar: 2, fingerprint, previousFingerprints: ['search|E_X|22'] })).toEqual({
      action: 'replan',
    });
  });

  it('pauses at the replan limit (default 3)', () => {
    const decision = decideReplan({ replansSoFar: DEFAULT_MAX_REPLANS, fingerprint, previousFingerprints: [] });
    expect(decision).toMatchObject({ action: 'pause', reason: 'max_replans' });
    expect(decideReplan({ replansSoFar: 1, maxReplans: 1, fingerprint, previousFingerprints: [] })).toMatchObject({
      reason: 'max_replans',
    });
  });

  it('pauses for no progress when the same failure comes back, even with budget left', () => {
    const decision = decideReplan({ replansSoFar: 1, fingerprint, previousFingerprints: [fingerprint] });
    expect(decision).toMatchObject({ action: 'pause', reason: 'no_progress' });
    if (decision.action === 'pause') expect(decision.detail).toContain(fingerprint);
  });
});
