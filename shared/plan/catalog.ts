/**
 * The capability catalog: which targets exist, their JSON Schema 2020-12 contracts and side effects. A catalog is
 * checked once, when it loads, so everything later can trust it: contracts are valid 2020-12 schemas, fully
 * self-contained (no remote `$ref`, no other dialect), and alternatives really share their contracts.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { CatalogError } from '../errors.ts';
import { messageOf } from './bounded-text.ts';
import { contractIssues, contractValidator, metaSchemaErrors } from './contracts.ts';
import { parseStrictJson } from './json.ts';
import { type Capability, catalogSchema } from './schema.ts';

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** A check of a value against a contract; `errors` is bounded (contracts.ts contractIssues). */
export type ContractCheck = { ok: true } | { ok: false; errors: string[] };

/**
 * Structural JSON equality: object key order does not matter, everything else (array order included) does.
 * Keys are compared position by position first, since equal documents usually list them in the same order.
 */
export function contractsEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!contractsEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  const aRecord = a as Record<string, unknown>;
  const bRecord = b as Record<string, unknown>;
  for (let i = 0; i < aKeys.length; i += 1) {
    const key = aKeys[i] as string;
    if (bKeys[i] !== key && !Object.hasOwn(bRecord, key)) return false;
    if (!contractsEqual(aRecord[key], bRecord[key])) return false;
  }
  return true;
}

// Keywords whose values are subschemas (or maps/arrays of them); everything else is data or an annotation, where a
// key such as "$ref" is just a property name.
const SCHEMA_KEYWORDS = new Set([
  'not',
  'if',
  'then',
  'else',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'additionalItems',
  'items',
]);
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

const isRegExp = (source: string): boolean => {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolvesLocally(root: unknown, ref: string, anchors: ReadonlySet<string>): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return anchors.has(ref.slice(1));
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = /^(0|[1-9]\d*)$/.test(token) ? node[Number(token)] : undefined;
    else node = isRecord(node) && Object.hasOwn(node, token) ? node[token] : undefined;
    if (node === undefined) return false;
  }
  return typeof node === 'boolean' || isRecord(node);
}

/** Problems that make a contract unusable as a self-contained 2020-12 schema (dialect, remote or dangling refs). */
function contractReferenceProblems(contract: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const refs: { ref: string; at: string }[] = [];
  const anchors = new Set<string>();
  const pending: { node: unknown; at: string }[] = [{ node: contract, at: '' }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { node, at } = next;
    if (!isRecord(node)) continue;
    const schema = node.$schema;
    if (schema !== undefined && schema !== JSON_SCHEMA_2020_12)
      problems.push(`${at}: $schema must be ${JSON_SCHEMA_2020_12}, got ${JSON.stringify(schema)}`);
    for (const keyword of ['$ref', '$dynamicRef']) {
      const ref = node[keyword];
      if (typeof ref !== 'string') continue;
      if (!ref.startsWith('#')) problems.push(`${at}: remote ${keyword} ${JSON.stringify(ref)} is not allowed`);
      else refs.push({ ref, at });
    }
    for (const keyword of ['$anchor', '$dynamicAnchor'])
      if (typeof node[keyword] === 'string') anchors.add(node[keyword]);
    // Formats are not asserted, so the meta-schema lets a broken regex through; ajv would only fail when compiling.
    const patterns = [node.pattern, ...(isRecord(node.patternProperties) ? Object.keys(node.patternProperties) : [])];
    for (const pattern of patterns)
      if (typeof pattern === 'string' && !isRegExp(pattern))
        problems.push(`${at}: pattern ${JSON.stringify(pattern)} is not a valid regular expression`);
    for (const [key, value] of Object.entries(node)) {
      if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(value))
        for (const [name, sub] of Object.entries(value)) pending.push({ node: sub, at: `${at}/${key}/${name}` });
      else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value))
        value.forEach((sub, i) => {
          pending.push({ node: sub, at: `${at}/${key}/${i}` });
        });
      else if (SCHEMA_KEYWORDS.has(key)) pending.push({ node: value, at: `${at}/${key}` });
    }
  }
  for (const { ref, at } of refs)
    if (!resolvesLocally(contract, ref, anchors)) problems.push(`${at}: $ref ${JSON.stringify(ref)} does not resolve`);
  return problems;
}

export class Catalog {
  readonly #byTarget: ReadonlyMap<string, Capability>;
  readonly #capabilities: readonly Capability[];
  // The process-wide validator of each contract (contracts.ts), found again here by the contract object.
  readonly #byContract = new WeakMap<object, ValidateFunction>();

  /** Use loadCatalog/parseCatalog: they check the document first. */
  constructor(capabilities: readonly Capability[]) {
    this.#capabilities = Object.freeze([...capabilities]);
    this.#byTarget = new Map(capabilities.map((c) => [c.target, c]));
  }

  get(target: string): Capability | undefined {
    return this.#byTarget.get(target);
  }

  has(target: string): boolean {
    return this.#byTarget.has(target);
  }

  targets(): string[] {
    return [...this.#byTarget.keys()];
  }

  capabilities(): readonly Capability[] {
    return this.#capabilities;
  }

  validateInput(target: string, value: unknown): ContractCheck {
    return this.#check(target, 'inputSchema', value);
  }

  validateOutput(target: string, value: unknown): ContractCheck {
    return this.#check(target, 'outputSchema', value);
  }

  #check(target: string, side: 'inputSchema' | 'outputSchema', value: unknown): ContractCheck {
    const capability = this.#byTarget.get(target);
    if (!capability) return { ok: false, errors: [`unknown target ${JSON.stringify(target)}`] };
    const contract = capability[side];
    let validateFn = this.#byContract.get(contract);
    if (!validateFn) {
      try {
        validateFn = contractValidator(contract);
      } catch (error) {
        return { ok: false, errors: [`the ${side} of ${target} cannot be compiled: ${messageOf(error)}`] };
      }
      this.#byContract.set(contract, validateFn);
    }
    if (validateFn(value)) return { ok: true };
    return { ok: false, errors: contractIssues(validateFn.errors) };
  }
}

function metaSchemaProblems(contract: Record<string, unknown>): string[] {
  try {
    const errors = metaSchemaErrors(contract);
    return errors === undefined ? [] : [`: not a valid JSON Schema 2020-12: ${errors}`];
  } catch (error) {
    return [`: not a valid JSON Schema 2020-12: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/** Checks a catalog document and returns the catalog; throws CatalogError listing every reason it is unusable. */
export function loadCatalog(doc: unknown): Catalog {
  const parsed = catalogSchema.safeParse(doc);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map(
      (i) => `${i.path.map((p) => `/${String(p)}`).join('') || '(root)'}: ${i.message}`,
    );
    throw new CatalogError(`invalid catalog: ${reasons.join('; ')}`, { context: { reasons } });
  }
  const capabilities = parsed.data.capabilities;
  const reasons: string[] = [];
  const byTarget = new Map<string, Capability>();
  capabilities.forEach((capability, i) => {
    if (byTarget.has(capability.target)) reasons.push(`/capabilities/${i}: duplicate target ${capability.target}`);
    else byTarget.set(capability.target, capability);
  });
  const checkedContracts = new Map<string, string[]>();
  capabilities.forEach((capability, i) => {
    for (const side of ['inputSchema', 'outputSchema'] as const) {
      const where = `/capabilities/${i}/${side}`;
      const contract = capability[side];
      const key = JSON.stringify(contract);
      let problems = checkedContracts.get(key);
      if (!problems) {
        problems = contractReferenceProblems(contract);
        if (problems.length === 0) problems = metaSchemaProblems(contract);
        checkedContracts.set(key, problems);
      }
      for (const problem of problems) reasons.push(`${where}${problem}`);
    }
    const compensation = capability.compensate;
    if (compensation !== undefined) {
      const undo = byTarget.get(compensation.target);
      if (!undo) reasons.push(`/capabilities/${i}/compensate/target: unknown target ${compensation.target}`);
      else if (undo.target === capability.target || undo.target.startsWith('human:'))
        reasons.push(`/capabilities/${i}/compensate/target: ${undo.target} cannot compensate ${capability.target}`);
    }
    for (const alternative of capability.alternatives ?? []) {
      const other = byTarget.get(alternative);
      if (!other) reasons.push(`/capabilities/${i}/alternatives: unknown target ${alternative}`);
      else if (
        !contractsEqual(other.inputSchema, capability.inputSchema) ||
        !contractsEqual(other.outputSchema, capability.outputSchema)
      )
        reasons.push(
          `/capabilities/${i}/alternatives: ${alternative} does not have the contracts of ${capability.target}`,
        );
    }
  });
  if (reasons.length > 0) throw new CatalogError(`invalid catalog: ${reasons.join('; ')}`, { context: { reasons } });
  return new Catalog(capabilities);
}

/** Parses catalog JSON strictly (duplicate keys, trailing data) and loads it. */
export function parseCatalog(text: string): Catalog {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) {
    const { path, message } = parsed.issue;
    throw new CatalogError(`invalid catalog JSON: ${message}${path ? ` (at ${path})` : ''}`, {
      context: { reasons: [message] },
    });
  }
  return loadCatalog(parsed.value);
}
