/**
 * The behaviour every CapabilityBinding must show, whatever transport it uses. A harness wires a scripted
 * capability (echo its input's value, or fail retryably / permanently when asked) into its transport: an
 * in-process function, a mocked Lambda, a real local HTTP server or a mocked model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';
import { aCall, caught } from './capability-call.ts';

/** What the scripted capability does with an input: echo `{ value }`, or fail as `{ fail: { retryable } }` says. */
export type ScriptedAnswer = { readonly output: unknown } | { readonly fail: { readonly retryable: boolean } };

export function scriptedAnswer(input: unknown): ScriptedAnswer {
  const record = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const fail = record.fail as { retryable?: unknown } | undefined;
  if (fail !== undefined) return { fail: { retryable: fail.retryable === true } };
  return { output: { value: record.value } };
}

export interface BindingHarness {
  readonly binding: CapabilityBinding;
  readonly kind: CapabilityBinding['kind'];
  stop?(): Promise<void>;
}

const VALUES: readonly [string, unknown][] = [
  ['a string', 'hello'],
  ['unicode text', 'żółw 🐢 — ü'],
  ['a number', 42.5],
  ['null', null],
  ['a nested object', { a: [1, { b: true }], c: 'd' }],
  ['an array', [1, 'two', { three: 3 }]],
];

export function describeBindingBehaviour(name: string, start: () => Promise<BindingHarness>): void {
  describe(`CapabilityBinding behaviour: ${name}`, () => {
    let harness: BindingHarness;
    beforeAll(async () => {
      harness = await start();
    });
    afterAll(async () => {
      await harness.stop?.();
    });

    it('reports its kind', () => {
      expect(harness.binding.kind).toBe(harness.kind);
    });

    it.each(VALUES)('echoes %s unchanged', async (_label, value) => {
      const result = await harness.binding.invoke(aCall({ input: { value } }));

      expect(result.output).toEqual({ value });
    });

    it('says which binding ran in the evidence', async () => {
      const result = await harness.binding.invoke(aCall({ input: { value: 1 } }));

      expect(result.evidence).toMatchObject({ binding: harness.kind });
    });

    it('keeps concurrent calls apart', async () => {
      const results = await Promise.all(
        [1, 2, 3, 4, 5].map((n) => harness.binding.invoke(aCall({ input: { value: n }, stepId: `s${n}` }))),
      );

      expect(results.map((r) => r.output)).toEqual([1, 2, 3, 4, 5].map((value) => ({ value })));
    });

    it.each([true, false])('surfaces a failure as a CapabilityError with retryable %s', async (retryable) => {
      const error = await caught(harness.binding.invoke(aCall({ input: { fail: { retryable } } })));

      expect(error).toMatchObject({ name: 'CapabilityError', retryable });
    });
  });
}
