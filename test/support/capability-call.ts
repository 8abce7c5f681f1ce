/**
 * Builders for capability calls in binding tests: a complete CapabilityCall for a catalog capability, with
 * overridable fields.
 */
import type { Capability } from '../../shared/plan/schema.ts';
import type { CapabilityCall } from '../../shared/ports/capabilities.ts';

export const echoCapability: Capability = {
  target: 'tool:conformance.echo',
  description: 'Returns its input value unchanged.',
  sideEffect: 'none',
  inputSchema: { type: 'object', required: ['value'], properties: { value: {} } },
  outputSchema: { type: 'object', required: ['value'], properties: { value: {} } },
};

export function aCall(overrides: Partial<CapabilityCall> = {}): CapabilityCall {
  const capability = overrides.capability ?? echoCapability;
  return {
    runId: 'run-1',
    stepId: 'step-1',
    generation: 1,
    attempt: 1,
    target: capability.target,
    capability,
    input: { value: 'hello' },
    step: { title: 'Echo a value', description: 'Send the value back.' },
    objective: 'Test the bindings',
    upstreamOutputs: {},
    idempotencyKey: 'run-1#step-1#1',
    ...overrides,
  };
}

/** The error a rejected promise carried, for asserting its fields (fails the test when nothing was thrown). */
export async function caught(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The stable code a CapabilityError carries in its context. */
export const codeOf = (error: Record<string, unknown>): unknown =>
  (error.context as { code?: unknown } | undefined)?.code;
