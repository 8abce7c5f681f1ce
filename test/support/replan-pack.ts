/**
 * A small capability pack with catalog alternatives, for replanning tests (the conformance pack has none): three
 * providers of the same contract. `tool:test.primary` lists the other two as alternatives. Each provider fails for
 * good with the same code and message when its name is in the input's `fail` list, so a run decides per step which
 * providers are down; calls are counted per provider.
 */
import { builtinTool } from '../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../shared/capabilities/capability-errors.ts';
import type { Capability } from '../../shared/plan/schema.ts';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';

export const PROVIDERS = {
  primary: 'tool:test.primary',
  secondary: 'tool:test.secondary',
  tertiary: 'tool:test.tertiary',
} as const;
export type ProviderName = keyof typeof PROVIDERS;

export const PROVIDER_DOWN_CODE = 'E_TEST_PROVIDER_DOWN';

const inputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['value'],
  properties: { value: { type: 'string' }, fail: { type: 'array', items: { type: 'string' } } },
};
const outputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['value', 'provider'],
  properties: { value: { type: 'string' }, provider: { type: 'string' } },
};

const capability = (name: ProviderName, alternatives: readonly ProviderName[]): Capability => ({
  target: PROVIDERS[name],
  description: `Test provider ${name}: echoes its value unless it is listed in fail.`,
  sideEffect: 'none',
  inputSchema,
  outputSchema,
  ...(alternatives.length === 0 ? {} : { alternatives: alternatives.map((a) => PROVIDERS[a]) }),
});

export interface ReplanPack {
  readonly capabilities: readonly Capability[];
  readonly bindings: Readonly<Record<string, CapabilityBinding>>;
  /** Calls so far, by provider name. */
  calls(name: ProviderName): number;
}

export function createReplanPack(): ReplanPack {
  const counts = new Map<ProviderName, number>();
  const binding = (name: ProviderName): CapabilityBinding =>
    builtinTool(`test ${name}`, async (input) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      const { value, fail = [] } = input as { value: string; fail?: string[] };
      if (fail.includes(name))
        throw capabilityError(PROVIDER_DOWN_CODE, 'test provider unavailable', { retryable: false });
      return { value, provider: name };
    });
  return {
    capabilities: [
      capability('primary', ['secondary', 'tertiary']),
      capability('secondary', ['primary']),
      capability('tertiary', []),
    ],
    bindings: {
      [PROVIDERS.primary]: binding('primary'),
      [PROVIDERS.secondary]: binding('secondary'),
      [PROVIDERS.tertiary]: binding('tertiary'),
    },
    calls: (name) => counts.get(name) ?? 0,
  };
}
