import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_TARGETS,
  conformanceBindings,
  conformanceCatalog,
  createConformancePack,
  ledgerEntries,
  resetConformance,
} from '../../../shared/capabilities/conformance.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { CapabilityBinding } from '../../../shared/ports/capabilities.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';

const catalog = loadCatalog(conformanceCatalog());
const invoke = (bindings: Record<string, CapabilityBinding>, target: string, input: unknown, stepId = 'step-1') => {
  const capability = catalog.get(target);
  if (!capability) throw new Error(`no ${target}`);
  const binding = bindings[target];
  if (!binding) throw new Error(`no binding for ${target}`);
  return binding.invoke(aCall({ target, capability, input, stepId, idempotencyKey: `run-1#${stepId}#1` }));
};

describe('conformanceCatalog', () => {
  it('lists exactly the seven conformance targets as a valid catalog', () => {
    expect(catalog.targets().sort()).toEqual(Object.values(CONFORMANCE_TARGETS).sort());
  });

  it('marks only the ledger and its compensation as mutating', () => {
    const mutating = catalog.capabilities().filter((c) => c.sideEffect !== 'none');

    expect(mutating.map((c) => [c.target, c.sideEffect])).toEqual([
      [CONFORMANCE_TARGETS.ledger, 'mutating'],
      [CONFORMANCE_TARGETS.unledger, 'mutating'],
    ]);
  });

  it("names the unledger as the ledger's compensation, fed the entryId of the ledger step's output", () => {
    expect(catalog.get(CONFORMANCE_TARGETS.ledger)?.compensate).toEqual({
      target: CONFORMANCE_TARGETS.unledger,
      input: { entryId: '{% $output.entryId %}' },
    });
  });

  it('gives the approver a gate contract: optional note in, { approved, comment? } out', () => {
    expect(catalog.validateInput(CONFORMANCE_TARGETS.approver, {}).ok).toBe(true);
    expect(catalog.validateInput(CONFORMANCE_TARGETS.approver, { note: 'look at the numbers' }).ok).toBe(true);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.approver, { approved: true }).ok).toBe(true);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.approver, { approved: false, comment: 'no' }).ok).toBe(true);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.approver, { comment: 'no' }).ok).toBe(false);
  });

  it('lets the scripted agent return any object, and nothing but an object', () => {
    expect(catalog.validateInput(CONFORMANCE_TARGETS.scripted, { output: { x: 1 }, confidence: 0.4 }).ok).toBe(true);
    expect(catalog.validateInput(CONFORMANCE_TARGETS.scripted, { output: { x: 1 }, confidence: 1.4 }).ok).toBe(false);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.scripted, { anything: [1, 2] }).ok).toBe(true);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.scripted, 'text').ok).toBe(false);
  });

  it('has no binding for the human gate', () => {
    expect(conformanceBindings()[CONFORMANCE_TARGETS.approver]).toBeUndefined();
  });
});

describe('conformance pack', () => {
  it('echo returns its value', async () => {
    const { bindings } = createConformancePack();

    const result = await invoke(bindings, CONFORMANCE_TARGETS.echo, { value: { nested: [1, 2] } });

    expect(result.output).toEqual({ value: { nested: [1, 2] } });
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.echo, result.output).ok).toBe(true);
  });

  it('sleep waits at least the given time and reports it', async () => {
    const { bindings } = createConformancePack();

    const started = performance.now();
    const result = await invoke(bindings, CONFORMANCE_TARGETS.sleep, { ms: 60 });

    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect((result.output as { sleptMs: number }).sleptMs).toBeGreaterThanOrEqual(60);
    expect(catalog.validateOutput(CONFORMANCE_TARGETS.sleep, result.output).ok).toBe(true);
  });

  it.each([true, false])('fail always throws with the message and retryable %s', async (retryable) => {
    const { bindings } = createConformancePack();

    const first = await caught(invoke(bindings, CONFORMANCE_TARGETS.fail, { message: 'boom', retryable }));
    const second = await caught(invoke(bindings, CONFORMANCE_TARGETS.fail, { message: 'boom', retryable }));

    for (const error of [first, second]) {
      expect(error).toMatchObject({ name: 'CapabilityError', message: 'boom', retryable });
      expect(codeOf(error)).toBe('E_CONFORMANCE_FAIL');
    }
  });

  it('flaky fails retryably the first `failures` calls for a key, then reports the calls', async () => {
    const pack = createConformancePack();
    const input = { key: 'k1', failures: 2 };

    const failures = [
      await caught(invoke(pack.bindings, CONFORMANCE_TARGETS.flaky, input)),
      await caught(invoke(pack.bindings, CONFORMANCE_TARGETS.flaky, input)),
    ];
    const third = await invoke(pack.bindings, CONFORMANCE_TARGETS.flaky, input);
    const fourth = await invoke(pack.bindings, CONFORMANCE_TARGETS.flaky, input);

    expect(failures.map((e) => e.retryable)).toEqual([true, true]);
    expect(third.output).toEqual({ attempts: 3 });
    expect(fourth.output).toEqual({ attempts: 4 });
    expect(pack.flakyCalls('k1')).toBe(4);
  });

  it('flaky counts each key separately', async () => {
    const { bindings } = createConformancePack();

    await caught(invoke(bindings, CONFORMANCE_TARGETS.flaky, { key: 'a', failures: 1 }));
    const other = await invoke(bindings, CONFORMANCE_TARGETS.flaky, { key: 'b', failures: 0 });

    expect(other.output).toEqual({ attempts: 1 });
  });

  it('ledger appends one entry per call with who wrote it', async () => {
    const pack = createConformancePack({ clock: () => new Date('2030-01-01T00:00:00Z') });

    const first = await invoke(pack.bindings, CONFORMANCE_TARGETS.ledger, { entry: { amount: 5 } }, 'pay');
    const second = await invoke(pack.bindings, CONFORMANCE_TARGETS.ledger, { entry: 'note' }, 'note');

    expect(first.output).toEqual({ entryId: 'ledger-000001' });
    expect(second.output).toEqual({ entryId: 'ledger-000002' });
    expect(pack.ledger.entries()).toEqual([
      {
        entryId: 'ledger-000001',
        entry: { amount: 5 },
        runId: 'run-1',
        stepId: 'pay',
        generation: 1,
        attempt: 1,
        idempotencyKey: 'run-1#pay#1',
        at: '2030-01-01T00:00:00.000Z',
      },
      expect.objectContaining({ entryId: 'ledger-000002', entry: 'note', stepId: 'note' }),
    ]);
  });

  it('scripted returns the output and confidence it was given', async () => {
    const { bindings } = createConformancePack();

    const result = await invoke(bindings, CONFORMANCE_TARGETS.scripted, { output: { x: 1 }, confidence: 0.4 });

    expect(result).toMatchObject({ output: { x: 1 }, confidence: 0.4 });
  });

  it('keeps the state of separate packs apart, and reset forgets it', async () => {
    const one = createConformancePack();
    const two = createConformancePack();

    await invoke(one.bindings, CONFORMANCE_TARGETS.ledger, { entry: 1 });
    await invoke(one.bindings, CONFORMANCE_TARGETS.flaky, { key: 'x', failures: 0 });

    expect(one.ledger.entries()).toHaveLength(1);
    expect(two.ledger.entries()).toHaveLength(0);
    one.reset();
    expect(one.ledger.entries()).toHaveLength(0);
    expect(one.flakyCalls('x')).toBe(0);
  });

  it('unledger reverses an entry by appending { reverses: entryId }', async () => {
    const pack = createConformancePack({ clock: () => new Date('2026-01-01T00:00:00Z') });
    await invoke(pack.bindings, CONFORMANCE_TARGETS.ledger, { entry: { amount: 5 } }, 'pay');
    const undone = await invoke(pack.bindings, CONFORMANCE_TARGETS.unledger, { entryId: 'ledger-000001' }, 'pay');

    expect(undone.output).toEqual({ entryId: 'ledger-000002' });
    expect(pack.ledger.entries().map((e) => e.entry)).toEqual([{ amount: 5 }, { reverses: 'ledger-000001' }]);
  });

  it('exposes the default pack ledger that conformanceBindings write to', async () => {
    resetConformance();

    await invoke(conformanceBindings(), CONFORMANCE_TARGETS.ledger, { entry: 'default' });

    expect(ledgerEntries().map((e) => e.entry)).toEqual(['default']);
    resetConformance();
    expect(ledgerEntries()).toEqual([]);
  });
});
