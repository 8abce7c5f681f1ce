/**
 * zod schemas as the JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) of the document's components. Each
 * schema is converted by zod itself; what it names (the contract's registry) is lifted into `components.schemas` and
 * referenced from there, so a schema used by many routes is written once.
 *
 * The one unnamed schema zod extracts by itself is a recursive one (z.json(), for any JSON value): it is named
 * JsonValue. Any other would be an accident of the schemas, so it is refused with a message that says what to do.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { components } from './registry.ts';

export type JsonSchema = { [key: string]: unknown };

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

/**
 * Bodies are described as they are sent (`input`: a body's schema transforms nothing). Parameters are described as
 * what they mean (`output`): `limit` is an integer from 1, though it travels as the text the route parses.
 */
export type Io = 'input' | 'output';

const convert = (schema: z.ZodType, io: Io = 'input'): JsonSchema =>
  z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    metadata: components,
    unrepresentable: 'any',
    cycles: 'ref',
    reused: 'inline',
  }) as JsonSchema;

function rewriteRefs(value: unknown, rename: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, rename));
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof inner === 'string' ? rename(inner) : rewriteRefs(inner, rename);
  }
  return out;
}

/** What z.json() becomes, its self-reference written `#`. */
const JSON_VALUE = rewriteRefs(convert(z.json()), () => '#') as JsonSchema;
delete JSON_VALUE.$schema;

/** Collects the components of every schema converted through it. */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  /** The JSON Schema of `schema`, with what it names put in the components (a `$ref` if it is named itself). */
  toJsonSchema(schema: z.ZodType, io: Io = 'input'): JsonSchema {
    const { $schema: _dialect, $defs, ...root } = convert(schema, io);
    const defs = ($defs ?? {}) as Record<string, JsonSchema>;
    const names = new Map<string, string>();
    for (const [local, def] of Object.entries(defs)) names.set(local, this.nameOf(local, def));
    const rename = (ref: string): string => {
      if (!ref.startsWith(DEFS)) return ref;
      const name = names.get(ref.slice(DEFS.length));
      if (name === undefined) throw new Error(`openapi: dangling reference ${ref}`);
      return `${COMPONENTS}${name}`;
    };
    for (const [local, def] of Object.entries(defs)) this.add(names.get(local) ?? local, rewriteRefs(def, rename));
    return rewriteRefs(root, rename) as JsonSchema;
  }

  private nameOf(local: string, def: JsonSchema): string {
    if (!local.startsWith('__schema')) return local;
    const own = `${DEFS}${local}`;
    const shape = rewriteRefs(def, (ref) => (ref === own ? '#' : ref));
    if (isDeepStrictEqual(shape, JSON_VALUE)) return 'JsonValue';
    throw new Error(
      `openapi: a schema used in several places was extracted without a name (${JSON.stringify(def).slice(0, 200)}); ` +
        'name it with named() in shared/api/contract',
    );
  }

  private add(name: string, schema: unknown): void {
    const known = this.schemas[name];
    if (known !== undefined && !isDeepStrictEqual(known, schema))
      throw new Error(`openapi: two different schemas are named ${name}`);
    this.schemas[name] = schema as JsonSchema;
  }
}
