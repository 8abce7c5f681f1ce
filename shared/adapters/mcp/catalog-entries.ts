/**
 * From an MCP server's `tools/list` to catalog entries and the bindings that answer them (`cairn catalog import
 * --mcp`). Pure: the command lists the tools, asks a person what the annotations leave open, and writes the files.
 *
 * - Target: `tool:<prefix>.<tool name>`, the prefix being the server's name unless the person gives one.
 * - Contracts: the tool's input schema and output schema (which describes its structured content). Servers often
 *   publish draft-07 (the SDK's McpServer does, from zod); the catalog holds JSON Schema 2020-12, so the draft's
 *   `$schema` is dropped and its tuple form of `items` rewritten. A tool without an output schema gets `{}` (any
 *   JSON), which the importer points out.
 * - Side effect: from the annotations (sideEffectOf). When they say nothing, the caller decides.
 */
import type { McpBindingConfig } from '../../capabilities/mcp-binding-config.ts';
import type { Capability, CatalogDocument, SideEffect } from '../../plan/schema.ts';
import type { McpServerAddress } from './connections.ts';

/** A tool as `tools/list` describes it (the fields the import reads). */
export interface ListedTool {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined;
  readonly annotations?: ToolHints | undefined;
}

export interface ToolHints {
  readonly title?: string | undefined;
  readonly readOnlyHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
}

/** What the annotations say about side effects, and why; undefined when they say nothing. */
export interface SideEffectReading {
  readonly sideEffect: SideEffect;
  readonly reason: string;
}

/**
 * The spec's hints, read conservatively: `readOnlyHint: true` is `none`. A tool that declares itself not read-only,
 * or says whether it is destructive, writes: `idempotent` when it is neither destructive nor unsafe to repeat
 * (`destructiveHint: false` and `idempotentHint: true`), else `mutating` (a plan must then say how to roll it
 * back). Nothing said (or only `idempotentHint`, which the spec reads only for writing tools): unknown.
 */
export function sideEffectOf(hints: ToolHints | undefined): SideEffectReading | undefined {
  if (hints?.readOnlyHint === true) return { sideEffect: 'none', reason: 'readOnlyHint' };
  if (hints?.readOnlyHint !== false && hints?.destructiveHint === undefined) return undefined;
  if (hints.destructiveHint === false && hints.idempotentHint === true)
    return { sideEffect: 'idempotent', reason: 'destructiveHint false, idempotentHint true' };
  if (hints.destructiveHint === true) return { sideEffect: 'mutating', reason: 'destructiveHint' };
  if (hints.destructiveHint === false) return { sideEffect: 'mutating', reason: 'additive (destructiveHint false)' };
  return { sideEffect: 'mutating', reason: 'readOnlyHint false (destructive by default)' };
}

const TARGET_CHARS = /[^A-Za-z0-9_.:/-]/g;

/** A name as a target segment: the target's characters only, starting with a letter or digit. */
export function targetSegment(name: string): string {
  const cleaned = name.replace(TARGET_CHARS, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned === '' ? 'mcp' : cleaned;
}

export const targetFor = (prefix: string, tool: string): string =>
  `tool:${targetSegment(prefix)}.${targetSegment(tool)}`.slice(0, 'tool:'.length + 128);

const OLD_DIALECTS = /^https?:\/\/json-schema\.org\/(draft-0[3-7]|draft\/2019-09)\/schema#?$/;
const SUBSCHEMA = new Set(['not', 'if', 'then', 'else', 'contains', 'additionalProperties', 'propertyNames']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One (sub)schema in 2020-12 terms: no older `$schema`, tuple `items` as `prefixItems`. */
function to202012(schema: unknown, root: boolean): unknown {
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' && typeof value === 'string' && OLD_DIALECTS.test(value)) continue;
    if (key === '$schema' && !root) continue;
    if (key === 'items' && Array.isArray(value)) out.prefixItems = value.map((s) => to202012(s, false));
    else if (key === 'additionalItems' && Array.isArray(schema.items)) out.items = to202012(value, false);
    else if (key === 'items' || SUBSCHEMA.has(key)) out[key] = to202012(value, false);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((s) => to202012(s, false));
    else if (SUBSCHEMA_MAPS.has(key) && isRecord(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, to202012(s, false)]));
    else out[key] = value;
  }
  return out;
}

type Contract = Capability['inputSchema'];

/** A tool's schema as a catalog contract (it came from JSON, so it is JSON). */
export const contractOf = (schema: Readonly<Record<string, unknown>>): Contract => to202012(schema, true) as Contract;

export function describeTool(tool: ListedTool, server: string): string {
  const text = tool.description ?? tool.title ?? tool.annotations?.title;
  return text !== undefined && text.trim() !== '' ? text.trim() : `The ${tool.name} tool of ${server}.`;
}

export function catalogEntry(
  tool: ListedTool,
  options: { readonly prefix: string; readonly sideEffect: SideEffect; readonly server: string },
): Capability {
  return {
    target: targetFor(options.prefix, tool.name),
    description: describeTool(tool, options.server),
    inputSchema: contractOf(tool.inputSchema),
    outputSchema: tool.outputSchema === undefined ? {} : contractOf(tool.outputSchema),
    sideEffect: options.sideEffect,
  };
}

export function bindingFor(server: McpServerAddress, tool: string): McpBindingConfig {
  return server.transport === 'stdio'
    ? {
        kind: 'mcp',
        transport: 'stdio',
        command: server.command,
        args: [...(server.args ?? [])],
        ...(server.env === undefined || Object.keys(server.env).length === 0 ? {} : { env: { ...server.env } }),
        tool,
      }
    : {
        kind: 'mcp',
        transport: 'http',
        url: server.url,
        ...(server.headers === undefined || Object.keys(server.headers).length === 0
          ? {}
          : { headers: { ...server.headers } }),
        tool,
      };
}

/** The catalog with the entries added: an entry replaces the one with its target, in place; new ones go last. */
export function mergeCatalog(existing: CatalogDocument | undefined, entries: readonly Capability[]): CatalogDocument {
  const incoming = new Map(entries.map((entry) => [entry.target, entry]));
  const kept = (existing?.capabilities ?? []).map((capability) => incoming.get(capability.target) ?? capability);
  const present = new Set(kept.map((capability) => capability.target));
  return { capabilities: [...kept, ...entries.filter((entry) => !present.has(entry.target))] };
}
