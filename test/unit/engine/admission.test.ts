/**
 * decideAdmission, pure: the bound per tenant, oldest first, a release always written, repeats harmless; and, as a
 * property over random sequences of queueing, ending and lost writes, the bound is never exceeded, no run is
 * admitted twice, an ended run never holds a slot, and a queued run waits only while the tenant's slots are full.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AdmissionState,
  decideAdmission,
  type QueuedRun,
  queueReadLimit,
} from '../../../shared/engine/admission.ts';

const queued = (runId: string, second: number): QueuedRun => ({
  runId,
  createdAt: `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`,
});
const empty: AdmissionState = { version: 0, running: [] };

describe('decideAdmission', () => {
  it('admits queued runs oldest first up to the bound, and leaves the rest queued', () => {
    const decision = decideAdmission({
      max: 2,
      state: empty,
      queue: [queued('c', 3), queued('a', 1), queued('b', 2)],
      change: { kind: 'pass' },
    });
    expect(decision.running).toEqual(['a', 'b']);
    expect(decision.admitted).toEqual(['a', 'b']);
    expect(decision.dispatch.map((q) => q.runId)).toEqual(['a', 'b']);
    expect(decision.write).toBe(true);
  });

  it('orders runs created in the same millisecond by id, so every writer admits the same one', () => {
    const decision = decideAdmission({
      max: 1,
      state: empty,
      queue: [queued('b', 1), queued('a', 1)],
      change: { kind: 'pass' },
    });
    expect(decision.admitted).toEqual(['a']);
  });

  it('writes nothing and admits nothing when the slots are full', () => {
    const decision = decideAdmission({
      max: 1,
      state: { version: 4, running: ['x'] },
      queue: [queued('a', 1)],
      change: { kind: 'pass' },
    });
    expect(decision).toEqual({ running: ['x'], write: false, dispatch: [], admitted: [] });
  });

  it('frees the slot of a run that ended and gives it to the oldest queued run', () => {
    const decision = decideAdmission({
      max: 1,
      state: { version: 4, running: ['x'] },
      queue: [queued('b', 2), queued('a', 1)],
      change: { kind: 'release', runId: 'x' },
    });
    expect(decision.running).toEqual(['a']);
    expect(decision.admitted).toEqual(['a']);
  });

  it('writes a release that frees nothing (a repeat), so a pass that read the ended run decides again', () => {
    const decision = decideAdmission({
      max: 2,
      state: { version: 4, running: ['x'] },
      queue: [],
      change: { kind: 'release', runId: 'gone' },
    });
    expect(decision.running).toEqual(['x']);
    expect(decision.write).toBe(true);
    expect(decision.admitted).toEqual([]);
  });

  it('tells again a queued run that holds a slot already (a pass died before telling it), without admitting it twice', () => {
    const decision = decideAdmission({
      max: 2,
      state: { version: 4, running: ['a'] },
      queue: [queued('a', 1)],
      change: { kind: 'pass' },
    });
    expect(decision.dispatch.map((q) => q.runId)).toEqual(['a']);
    expect(decision.admitted).toEqual([]);
    expect(decision.running).toEqual(['a']);
    expect(decision.write).toBe(false);
  });

  it('gives a reopened run its slot back even over the bound, and admits nobody past it', () => {
    const decision = decideAdmission({
      max: 1,
      state: { version: 4, running: ['x'] },
      queue: [queued('a', 1)],
      change: { kind: 'reenter', runId: 'y' },
    });
    expect(decision.running).toEqual(['x', 'y']);
    expect(decision.admitted).toEqual([]);
    expect(decision.write).toBe(true);
  });

  it('admits every queued run without a bound (a bound lifted while runs waited)', () => {
    const decision = decideAdmission({
      max: Number.POSITIVE_INFINITY,
      state: { version: 2, running: [] },
      queue: [queued('a', 1), queued('b', 2)],
      change: { kind: 'pass' },
    });
    expect(decision.admitted).toEqual(['a', 'b']);
  });

  it('reads as many queue entries as the slots held plus the slots free', () => {
    expect(queueReadLimit(3, { version: 1, running: ['a'] })).toBe(3);
    expect(queueReadLimit(1, { version: 1, running: ['a', 'b'] })).toBe(2);
    expect(queueReadLimit(Number.POSITIVE_INFINITY, empty)).toBe(1000);
  });
});

/**
 * A tenant's admission as the shell runs it, with the store's version check: each step of the model is a pass that
 * reads, then (maybe after another writer got in) writes over what it read or loses and does nothing.
 */
type Action =
  | { readonly kind: 'queue' }
  | { readonly kind: 'end'; readonly pick: number }
  | { readonly kind: 'raced'; readonly pick: number };

const actions = fc.array(
  fc.oneof(
    fc.constant<Action>({ kind: 'queue' }),
    fc.nat(20).map((pick): Action => ({ kind: 'end', pick })),
    fc.nat(20).map((pick): Action => ({ kind: 'raced', pick })),
  ),
  { maxLength: 60 },
);

describe('decideAdmission, over random histories of one tenant', () => {
  it('never runs more than the bound, never admits a run twice or after it ended, and leaves no run waiting for a free slot', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), actions, (max, history) => {
        let record: AdmissionState = empty;
        const queue = new Map<string, QueuedRun>();
        const ended = new Set<string>();
        const admittedEver = new Set<string>();
        let next = 0;

        /** One pass; `interloper` runs between its read and its write (another writer's whole pass). */
        const pass = (change: Parameters<typeof decideAdmission>[0]['change'], interloper?: () => void): boolean => {
          const read = record;
          const decision = decideAdmission({ max, state: read, queue: [...queue.values()], change });
          interloper?.();
          if (decision.write) {
            if (record.version !== read.version) return false;
            record = { version: read.version + 1, running: decision.running };
          }
          for (const run of decision.admitted) {
            expect(admittedEver.has(run)).toBe(false);
            expect(ended.has(run)).toBe(false);
            admittedEver.add(run);
          }
          for (const entry of decision.dispatch) queue.delete(entry.runId);
          return true;
        };
        const settle = (change: Parameters<typeof decideAdmission>[0]['change'], interloper?: () => void) => {
          if (!pass(change, interloper)) expect(pass(change)).toBe(true);
        };
        const release = (runId: string, interloper?: () => void) => {
          ended.add(runId);
          queue.delete(runId);
          settle({ kind: 'release', runId }, interloper);
        };
        const enqueue = () => {
          const runId = `r${String(next).padStart(3, '0')}`;
          queue.set(runId, queued(runId, next % 60));
          next += 1;
          return runId;
        };

        for (const action of history) {
          if (action.kind === 'queue') {
            enqueue();
            settle({ kind: 'pass' });
          } else {
            // `raced`: a new run's pass reads the record and the queue, then the victim (maybe that new run itself,
            // cancelled at once) ends before the pass writes.
            if (action.kind === 'raced') enqueue();
            const live = [...record.running, ...queue.keys()].filter((id) => !ended.has(id));
            const victim = live[action.pick % Math.max(1, live.length)];
            if (victim === undefined) continue;
            if (action.kind === 'raced') settle({ kind: 'pass' }, () => release(victim));
            else release(victim);
          }
          expect(record.running.length).toBeLessThanOrEqual(max);
          expect(record.running.filter((id) => ended.has(id))).toEqual([]);
          expect(new Set(record.running).size).toBe(record.running.length);
          // Work-conserving: a run waits only while every slot is taken.
          if (queue.size > 0) expect(record.running.length).toBe(max);
        }
      }),
      { numRuns: 300 },
    );
  });
});
