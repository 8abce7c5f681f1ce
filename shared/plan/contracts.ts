/**
 * Compiled JSON Schema 2020-12 validators, one per distinct schema in the process. Compiling is by far the dearest
 * part of checking a value against a contract, and the same contracts come back all the time: every step of a
 * target, every catalog a process loads (a Lambda that runs several services loads one each), every handler. So a
 * schema is compiled once and its validator is found again by the schema's JSON text; equal schemas share one
 * validator whichever object carries them. The cache is bounded: past its size, the least recently used validator
 * is dropped (and compiled again if it is asked for later).
 *
 * Every ajv compile of a contract goes through here (Catalog.validateInput/validateOutput are its users), with the
 * options cairn has always used: formats are annotations in 2020-12, unknown keywords are allowed, nothing is logged.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { boundIssues } from './bounded-text.ts';

/** A JSON Schema: an object, or `true`/`false`. */
export type JsonSchema = Readonly<Record<string, unknown>> | boolean;

export const DEFAULT_MAX_VALIDATORS = 2048;

export interface ContractValidators {
  /**
   * The compiled validator of `schema`, compiled on the first call for its JSON text. Throws ajv's error when the
   * schema cannot be compiled; nothing is cached then, so the next call throws the same error.
   */
  get(schema: JsonSchema): ValidateFunction;
  /** How many validators are held now (at most `maxEntries`). */
  readonly size: number;
  /** How many schemas were compiled since the cache was created (compile failures included). */
  readonly compiles: number;
}

export const newAjv = (): Ajv2020 =>
  new Ajv2020({ strict: false, allErrors: true, validateFormats: false, logger: false });

/**
 * The ajv instance contracts are compiled on, shared by every cache: creating one means compiling the 2020-12
 * meta-schema again (tens of milliseconds), so it is made once. It keeps nothing of a contract after compiling it
 * (two different contracts may carry the same `$id`); an instance a failed compile may have left half-registered
 * is dropped for a new one.
 */
let shared: Ajv2020 | undefined;

function compile(schema: JsonSchema): ValidateFunction {
  shared ??= newAjv();
  const ajv = shared;
  const knownRefs = new Set(Object.keys(ajv.refs));
  let compiled: ValidateFunction;
  try {
    compiled = ajv.compile(schema);
  } catch (error) {
    shared = undefined;
    throw error;
  }
  if (typeof schema === 'object') ajv.removeSchema(schema);
  // Nested `$id`s are registered by name too; they would leak into the next contract's resolution.
  for (const ref of Object.keys(ajv.refs)) if (!knownRefs.has(ref)) delete ajv.refs[ref];
  return compiled;
}

/** A cache of compiled validators holding at most `maxEntries` of them (least recently used out first). */
export function createContractValidators(options: { maxEntries?: number } = {}): ContractValidators {
  const maxEntries = Math.max(1, Math.floor(options.maxEntries ?? DEFAULT_MAX_VALIDATORS));
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recently used first.
  const byText = new Map<string, ValidateFunction>();
  let compiles = 0;
  return {
    get(schema) {
      const key = JSON.stringify(schema);
      const found = byText.get(key);
      if (found) {
        byText.delete(key);
        byText.set(key, found);
        return found;
      }
      compiles += 1;
      const compiled = compile(schema);
      byText.set(key, compiled);
      if (byText.size > maxEntries) byText.delete(byText.keys().next().value as string);
      return compiled;
    },
    get size() {
      return byText.size;
    },
    get compiles() {
      return compiles;
    },
  };
}

/** The process's validators, shared by every catalog. */
export const contractValidators: ContractValidators = createContractValidators();

/** The compiled validator of a contract, from the process's cache. */
export const contractValidator = (schema: JsonSchema): ValidateFunction => contractValidators.get(schema);

/**
 * What a failed check found, one line per problem and bounded (./bounded-text.ts): a value whose 200,000 items each
 * break the contract gives 200,000 errors (`allErrors`), of which only the first 100 are formatted.
 */
export const contractIssues = (errors: ValidateFunction['errors']): string[] =>
  boundIssues(errors ?? [], (e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${namedField(e)}`);

/** The field a problem is about when ajv's message leaves it out: `(root) must NOT have additional properties: 'x'`. */
function namedField(error: NonNullable<ValidateFunction['errors']>[number]): string {
  const extra = (error.params as { additionalProperty?: unknown }).additionalProperty;
  return error.keyword === 'additionalProperties' && typeof extra === 'string' ? `: '${extra}'` : '';
}

/**
 * Why `schema` is not a valid JSON Schema 2020-12 (ajv's text, data named `schema`), or undefined when it is.
 * Checked against the meta-schema of the same shared instance, so the meta-schema is compiled once for both.
 */
export function metaSchemaErrors(schema: JsonSchema): string | undefined {
  shared ??= newAjv();
  const ajv = shared;
  if (ajv.validateSchema(schema)) return undefined;
  return ajv.errorsText(ajv.errors, { dataVar: 'schema' });
}
