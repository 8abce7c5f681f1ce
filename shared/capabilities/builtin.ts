/**
 * Builtin bindings: capabilities implemented by plain async functions in this process (the demo and conformance
 * packs, tests, local experiments). A function may throw a CapabilityError (see capability-errors.ts) to pick its
 * code and retryability; anything else it throws becomes E_CAPABILITY, retryable unless it is a CairnError that
 * says otherwise.
 */
import { isCapabilityError } from '../errors.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../ports/capabilities.ts';
import { CAPABILITY_ERROR_CODES, capabilityError, toCapabilityFailure } from './capability-errors.ts';
import { isValidConfidence } from './wire.ts';

/** A tool: input in, output out. */
export type BuiltinTool = (input: unknown, call: CapabilityCall) => Promise<unknown>;

/** An agent: input in, output and a self-reported confidence out. */
export type BuiltinAgent = (
  input: unknown,
  call: CapabilityCall,
) => Promise<{ output: unknown; confidence: number; note?: string }>;

function wrap(name: string, run: (call: CapabilityCall) => Promise<CapabilityResult>): CapabilityBinding {
  return {
    kind: 'builtin',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      try {
        return await run(call);
      } catch (error) {
        if (isCapabilityError(error)) throw error;
        const failure = toCapabilityFailure(error);
        throw capabilityError(failure.code, `builtin ${name} failed: ${failure.message}`, {
          retryable: failure.retryable,
          cause: error,
        });
      }
    },
  };
}

/** A builtin binding from a function that returns the whole result (output, confidence, note). */
export function builtinBinding(
  name: string,
  run: (call: CapabilityCall) => Promise<Omit<CapabilityResult, 'evidence'>>,
): CapabilityBinding {
  return wrap(name, async (call) => ({ ...(await run(call)), evidence: { binding: 'builtin', name } }));
}

export function builtinTool(name: string, fn: BuiltinTool): CapabilityBinding {
  return builtinBinding(name, async (call) => ({ output: await fn(call.input, call) }));
}

export function builtinAgent(name: string, fn: BuiltinAgent): CapabilityBinding {
  return builtinBinding(name, async (call) => {
    const answer = await fn(call.input, call);
    if (!isValidConfidence(answer.confidence))
      throw capabilityError(
        CAPABILITY_ERROR_CODES.modelAnswer,
        `builtin ${name} returned confidence ${String(answer.confidence)}`,
        {
          retryable: false,
        },
      );
    return answer;
  });
}
