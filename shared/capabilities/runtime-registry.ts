/**
 * The registry a runtime uses: builtin packs (demo fakes, conformance pack) first, then the configured bindings
 * (CAIRN_BINDINGS), which win for any target they name. The same function serves the Lambda and the local stack.
 */
import { ValidationError } from '../errors.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { CapabilityBinding } from '../ports/capabilities.ts';
import { conformanceBindings } from './conformance.ts';
import { type DemoOptions, demoBindings } from './demo.ts';
import {
  type BindingDeps,
  bindingsConfigFromJson,
  bindingsFromConfig,
  type CapabilityRegistryView,
  createCapabilityRegistry,
} from './registry.ts';

export type BuiltinPack = 'demo' | 'conformance';

export interface RuntimeRegistryOptions {
  readonly catalog: Catalog;
  /** The CAIRN_BINDINGS JSON (absent or empty: none). */
  readonly bindingsJson?: string | undefined;
  readonly builtins?: readonly BuiltinPack[];
  readonly demo?: DemoOptions;
  readonly deps?: BindingDeps;
}

/** Parses a CAIRN_BUILTINS-style list (`demo,conformance`); unknown names are refused, `none` means none. */
export function parseBuiltinPacks(value: string | undefined, fallback: readonly BuiltinPack[]): BuiltinPack[] {
  if (value === undefined || value.trim() === '') return [...fallback];
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n.length > 0 && n !== 'none');
  for (const name of names)
    if (name !== 'demo' && name !== 'conformance') {
      const message = `unknown builtin capability pack ${JSON.stringify(name)} (known: demo, conformance)`;
      throw new ValidationError(message, [{ code: 'E_BINDINGS_CONFIG', path: '', message }]);
    }
  return names as BuiltinPack[];
}

export function createRuntimeRegistry(options: RuntimeRegistryOptions): CapabilityRegistryView {
  const sources: Record<string, CapabilityBinding>[] = [];
  const packs = options.builtins ?? [];
  if (packs.includes('demo'))
    sources.push(demoBindings({ capabilities: [...options.catalog.capabilities()] }, options.demo));
  if (packs.includes('conformance')) sources.push(conformanceBindings());
  // AWS clients are only created when the configuration names a Lambda or Bedrock binding.
  sources.push(bindingsFromConfig(bindingsConfigFromJson(options.bindingsJson), options.deps));
  return createCapabilityRegistry(...sources);
}
