/**
 * The named schemas of the API's contract. A schema added here becomes one entry of the OpenAPI document's
 * `components.schemas` (and one named type of the generated client) instead of being repeated wherever it is used.
 * The registry is the contract's own, not zod's global one: `cairn schema` (the plan's JSON Schema) keeps inlining
 * everything, whatever the API names.
 */
import { z } from 'zod';

export interface ComponentMeta {
  /** Absent: the schema stays inline, its description and examples kept. */
  readonly id?: string;
  readonly description?: string;
  readonly examples?: readonly unknown[];
}

export const components = z.registry<ComponentMeta>();

/** Registers `schema` as the component `id` and returns it, so a definition reads `const X = named('X', ...)`. */
export function named<S extends z.ZodType>(id: string, schema: S, meta: Omit<ComponentMeta, 'id'> = {}): S {
  components.add(schema, { id, ...meta });
  return schema;
}

/**
 * A description for a schema that stays inline (zod's `.describe()` writes to zod's global registry, which the
 * contract does not read). Each call must get its own schema instance.
 */
export function described<S extends z.ZodType>(description: string, schema: S): S {
  components.add(schema, { description });
  return schema;
}
