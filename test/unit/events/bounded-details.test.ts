import { describe, expect, it } from 'vitest';
import { publishedOf } from '../../../shared/engine/run/published.ts';
import type { DraftState } from '../../../shared/engine/run/state.ts';
import {
  BLOCKED_BY_SAMPLE,
  blockedByOf,
  boundedDetail,
  EVENT_MESSAGE_CHARS,
  idsBytes,
  LISTED_IDS_BYTES,
  sliceIds,
  stepsInvalidatedParts,
} from '../../../shared/events/bounded-details.ts';
import { parseEventDetail } from '../../../shared/events/catalog.ts';
import { PUT_EVENTS_LIMITS, putEventsEntryBytes } from '../../../shared/events/put-events.ts';
import { STEP_ID_PATTERN } from '../../../shared/plan/schema.ts';

/** `n` step ids of the longest length a plan allows (64 characters), in plan order. */
const longIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `s${String(i).padStart(63, '0')}`);

/** The PutEvents entry size of a detail as the relay publishes it (with its `at` stamp). */
const entryBytes = (detailType: string, detail: Record<string, unknown>): number =>
  putEventsEntryBytes({
    Source: 'cairn',
    DetailType: detailType,
    Detail: JSON.stringify({ ...detail, at: '2026-12-01T00:00:00.000Z' }),
  });

describe('stepsInvalidatedParts', () => {
  it('keeps every part of a 4,000-step invalidation far under the PutEvents limit, and each valid', () => {
    const ids = longIds(4000);
    expect(ids.every((id) => STEP_ID_PATTERN.test(id))).toBe(true);
    const reason = 'r'.repeat(2000);
    // What one event carried before: the whole list, over the limit on its own.
    expect(entryBytes('StepsInvalidated', { runId: 'run-1', stepIds: ids, reason })).toBeGreaterThan(
      PUT_EVENTS_LIMITS.bytes,
    );

    const parts = stepsInvalidatedParts('run-1', ids, reason);

    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(entryBytes('StepsInvalidated', { ...part })).toBeLessThanOrEqual(LISTED_IDS_BYTES + 4096);
      expect(parseEventDetail('StepsInvalidated', part)).toEqual({ ok: true, detail: part });
    }
    expect(parts.flatMap((p) => p.stepIds)).toEqual(ids);
    expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i + 1));
    expect(new Set(parts.map((p) => `${p.parts} ${p.total} ${p.reason}`))).toEqual(
      new Set([`${parts.length} 4000 ${reason}`]),
    );
  });

  it('announces a small invalidation in one part', () => {
    expect(stepsInvalidatedParts('run-1', ['a', 'b'], 'why')).toEqual([
      { runId: 'run-1', stepIds: ['a', 'b'], part: 1, parts: 1, total: 2, reason: 'why' },
    ]);
  });
});

describe('sliceIds', () => {
  it('fills each slice up to the budget in order, never over it', () => {
    const ids = ['aaaa', 'bbbb', 'cccc', 'dddd', 'e'];
    // Each 4-letter id takes 7 bytes ("aaaa",), a list 1 more: 15 bytes take two ids.
    expect(sliceIds(ids, 15)).toEqual([['aaaa', 'bbbb'], ['cccc', 'dddd'], ['e']]);
    for (const slice of sliceIds(longIds(500), 1000)) expect(idsBytes(slice)).toBeLessThanOrEqual(1000);
  });

  it('gives no ids one empty slice', () => {
    expect(sliceIds([])).toEqual([[]]);
  });

  it('measures a list as its JSON does', () => {
    for (const ids of [[], ['a'], longIds(3)]) expect(idsBytes(ids)).toBe(JSON.stringify(ids).length);
  });
});

describe('blockedByOf', () => {
  it('names at most the sample and counts every cause', () => {
    const causes = longIds(3000);
    const bounded = blockedByOf(causes);
    expect(bounded.blockedBy).toEqual(causes.slice(0, BLOCKED_BY_SAMPLE));
    expect(bounded.blockedByCount).toBe(3000);
    expect(bounded.message).toMatch(new RegExp(`and ${3000 - BLOCKED_BY_SAMPLE} more did not succeed$`));
    const detail = { runId: 'run-1', stepId: 'z', generation: 2, blockedBy: bounded.blockedBy, blockedByCount: 3000 };
    expect(parseEventDetail('StepBlocked', detail).ok).toBe(true);
    expect(entryBytes('StepBlocked', detail)).toBeLessThan(4096);
  });

  it('names every cause when there are few', () => {
    expect(blockedByOf(['a', 'b'])).toEqual({
      blockedBy: ['a', 'b'],
      blockedByCount: 2,
      message: 'blocked: upstream step a, b did not succeed',
    });
  });
});

describe('the event catalog', () => {
  it('refuses a StepBlocked that names more causes than the sample', () => {
    const detail = { runId: 'r', stepId: 'z', generation: 1, blockedBy: longIds(21), blockedByCount: 21 };
    expect(parseEventDetail('StepBlocked', detail).ok).toBe(false);
  });

  it('refuses a StepsInvalidated part that lists more than its budget', () => {
    const ids = longIds(100);
    expect(idsBytes(ids)).toBeGreaterThan(LISTED_IDS_BYTES);
    const detail = { runId: 'r', stepIds: ids, part: 1, parts: 1, total: 200, reason: 'x' };
    expect(parseEventDetail('StepsInvalidated', detail).ok).toBe(false);
  });
});

describe('boundedDetail', () => {
  const failure = {
    code: 'E_TOOL',
    message: `${'m'.repeat(300_000)}`,
    retryable: false,
    details: { body: 'd'.repeat(300_000) },
  };

  it('carries an error as the catalog has it: its message clipped, no details', () => {
    const detail = boundedDetail({ runId: 'r', stepId: 's', generation: 1, attempts: 1, error: failure, final: true });
    expect(detail.error).toEqual({
      code: 'E_TOOL',
      message: `${'m'.repeat(EVENT_MESSAGE_CHARS - 1)}…`,
      retryable: false,
    });
    expect(parseEventDetail('StepFailed', detail).ok).toBe(true);
    expect(entryBytes('StepFailed', detail)).toBeLessThan(2048);
  });

  it('never splits a surrogate pair, and leaves a short message and a detail without an error as they are', () => {
    const message = `${'x'.repeat(EVENT_MESSAGE_CHARS - 2)}😀😀`;
    const clipped = boundedDetail({ error: { code: 'E', message } }).error.message;
    expect(clipped).toBe(`${'x'.repeat(EVENT_MESSAGE_CHARS - 2)}…`);
    expect(boundedDetail({ error: { code: 'E', message: 'short' } })).toEqual({
      error: { code: 'E', message: 'short' },
    });
    const plain = { runId: 'r', reason: 'x' };
    expect(boundedDetail(plain)).toBe(plain);
  });

  it('is applied to every event the decider publishes', () => {
    const after = {
      run: { runId: 'r', status: 'running' },
      steps: new Map([['s', { compensation: { target: 'tool:undo' } }]]),
    } as unknown as DraftState;
    const [built] = publishedOf(after, {
      type: 'CompensationEnded',
      at: '2026-01-01T00:00:00.000Z',
      stepId: 's',
      generation: 1,
      state: 'compensation_failed',
      error: failure,
      trace: [],
    });
    expect(built?.detail).toMatchObject({ target: 'tool:undo', state: 'compensation_failed' });
    const error = built?.detail.error as { message: string } | undefined;
    expect(error?.message).toHaveLength(EVENT_MESSAGE_CHARS);
    expect(error).not.toHaveProperty('details');
  });
});
