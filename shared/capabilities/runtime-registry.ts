/**
 * The builtin capability packs a runtime can load: the demo fakes and the conformance pack. Pure: configured
 * bindings (CAIRN_BINDINGS) are built by adapters, and the registry that merges both is made by
 * createRuntimeRegistry (shared/adapters/bindings.ts), the same function for the Lambda and the local stack.
 */
import { ValidationError } from '../errors.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { CapabilityBinding } from '../ports/capabilities.ts';
import { conformanceBindings } from './conformance.ts';
import { type DemoOptions, demoBindings } from './demo.ts';

export type BuiltinPack = 'demo' | 'conformance';

export interface BuiltinPacksOptions {
  readonly catalog: Catalog;
  readonly builtins?: readonly BuiltinPack[];
  readonly demo?: DemoOptions;
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

/** The bindings of the chosen packs, demo first, then conformance (a later pack wins for a target both bind). */
export function builtinBindings(options: BuiltinPacksOptions): Record<string, CapabilityBinding> {
  const packs = options.builtins ?? [];
  return {
    ...(packs.includes('demo')
      ? demoBindings({ capabilities: [...options.catalog.capabilities()] }, options.demo)
      : {}),
    ...(packs.includes('conformance') ? conformanceBindings() : {}),
  };
}
