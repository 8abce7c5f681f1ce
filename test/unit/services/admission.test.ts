/**
 * The admission shell over a store: runs of one tenant queued at the same moment by many requests, each pass racing
 * the others for the record's version, still admit exactly the bound, oldest first; a run's end admits the next;
 * a release repeated (a redelivered batch) frees nothing twice; runs left told nothing by a pass that died are told
 * by the next one; without a bound a tenant that never had one costs one read per ended run.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryAdmissionStore } from '../../../shared/adapters/memory/admission.ts';
import type { RunCommandInput } from '../../../shared/engine/run/commands.ts';
import type { AdmissionStore } from '../../../shared/ports/admission.ts';
import { ADMISSION_TRIES, createAdmission } from '../../../shared/services/admission.ts';

const at = (second: number): string => `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`;

function setUp(max: number, store: AdmissionStore = createMemoryAdmissionStore()) {
  const told: string[] = [];
  const mailbox = {
    send: async (runId: string, command: RunCommandInput) => {
      expect(command).toEqual({ kind: 'AdmitRun' });
      told.push(runId);
    },
  };
  // Every store call yields, so concurrent passes interleave between their read and their write.
  const admission = createAdmission({ store, mailbox, maxRunningRuns: max, pause: async () => {} });
  return { admission, store, told };
}

describe('createAdmission', () => {
  it('admits exactly the bound of many runs queued at once, and the rest in order as runs end', async () => {
    const { admission, store, told } = setUp(2);
    const runs = Array.from({ length: 6 }, (_, i) => ({ runId: `r${i}`, createdAt: at(i) }));
    const admitted = await Promise.all(runs.map((run) => admission.enter('acme', run)));
    expect(admitted.filter(Boolean)).toHaveLength(2);
    const holding = (await store.getAdmission('acme')).running;
    expect(holding).toHaveLength(2);
    // A pass tells every queued run holding a slot whose entry is still there: racing passes may tell one twice,
    // which its decider takes once.
    expect(new Set(told)).toEqual(new Set(holding));
    expect(await store.listQueue('acme', 10)).toHaveLength(4);

    told.length = 0;
    const ended = runs.find((r) => r.runId === holding[0]);
    if (ended === undefined) throw new Error('no run holds a slot');
    await admission.release('acme', ended);
    const waiting = runs.filter((r) => !holding.includes(r.runId));
    expect(told).toEqual([waiting[0]?.runId]);
  });

  it('frees nothing twice for a release delivered again', async () => {
    const { admission, store, told } = setUp(1);
    await admission.enter('acme', { runId: 'a', createdAt: at(1) });
    await admission.enter('acme', { runId: 'b', createdAt: at(2) });
    await admission.enter('acme', { runId: 'c', createdAt: at(3) });
    await admission.release('acme', { runId: 'a', createdAt: at(1) });
    await admission.release('acme', { runId: 'a', createdAt: at(1) });
    expect(told).toEqual(['a', 'b']);
    expect((await store.getAdmission('acme')).running).toEqual(['b']);
  });

  it('tells again a run a pass admitted and died before telling', async () => {
    const store = createMemoryAdmissionStore();
    // A pass wrote the record (a holds a slot) and died before it told a or dropped a's queue entry.
    await store.enqueueRun('acme', { runId: 'a', createdAt: at(1) });
    await store.putAdmission('acme', 0, ['a']);
    const { admission, told } = setUp(2, store);
    await admission.enter('acme', { runId: 'b', createdAt: at(2) });
    expect(told).toEqual(['a', 'b']);
    expect(await store.listQueue('acme', 10)).toEqual([]);
  });

  it('gives up with AdmissionConflictError after its tries when the record keeps moving', async () => {
    const inner = createMemoryAdmissionStore();
    let bumps = 0;
    const moving: AdmissionStore = {
      ...inner,
      async putAdmission(tenant, version, running) {
        // Another writer always gets there first.
        bumps += 1;
        await inner.putAdmission(tenant, (await inner.getAdmission(tenant)).version, []);
        return inner.putAdmission(tenant, version, running);
      },
    };
    const { admission } = setUp(1, moving);
    await expect(admission.enter('acme', { runId: 'a', createdAt: at(1) })).rejects.toMatchObject({
      name: 'AdmissionConflictError',
      context: { tenant: 'acme' },
    });
    expect(bumps).toBe(ADMISSION_TRIES);
  });

  it('without a bound, reads once and writes nothing when a run of a tenant that never had one ends', async () => {
    const inner = createMemoryAdmissionStore();
    const calls: string[] = [];
    const counting = Object.fromEntries(
      Object.entries(inner).map(([name, call]) => [
        name,
        (...args: unknown[]) => {
          calls.push(name);
          return (call as (...a: unknown[]) => unknown)(...args);
        },
      ]),
    ) as unknown as AdmissionStore;
    const { admission } = setUp(Number.POSITIVE_INFINITY, counting);
    expect(admission.bounded).toBe(false);
    await admission.release('acme', { runId: 'a', createdAt: at(1) });
    expect(calls).toEqual(['getAdmission']);
  });
});
