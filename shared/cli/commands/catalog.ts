/**
 * `cairn catalog import --mcp <command or url> [options]`: lists an MCP server's tools and writes a catalog entry
 * for each (target, description, input and output contracts, side effect), checked by the catalog's own loader,
 * and the CAIRN_BINDINGS that answer those targets through the server. Exit 0 every tool imported, 1 the server
 * could not be listed or some tools were left out (the rest is still written), 2 bad usage or unreadable files.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  bindingFor,
  catalogEntry,
  type ListedTool,
  mergeCatalog,
  type SideEffectReading,
  sideEffectOf,
} from '../../adapters/mcp/catalog-entries.ts';
import { createMcpConnections, describeServer, type McpServerAddress } from '../../adapters/mcp/connections.ts';
import type { McpBindingConfig } from '../../capabilities/mcp-binding-config.ts';
import { bindingsConfigFromJson } from '../../capabilities/registry.ts';
import { isCatalogError, isValidationError } from '../../errors.ts';
import { loadCatalog, parseCatalog } from '../../plan/catalog.ts';
import type { Capability, CatalogDocument } from '../../plan/schema.ts';
import { terminalBlock, terminalJson, terminalLine } from '../../terminal-text.ts';
import { type CliIo, type CommandRun, EXIT_NO, EXIT_OK, UsageError } from '../io.ts';
import { HELP, InputError, limit, parseStrict, readInputFile, runLocalCommand } from '../local-command.ts';

/** A file's text, or undefined when there is no such file yet (any other problem reading it is an InputError). */
async function readIfPresent(what: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return readInputFile(what, path);
  }
}

const USAGE = `usage: cairn catalog import --mcp <command or url> [options]

Lists the tools of an MCP server and writes a catalog entry for each, with the CAIRN_BINDINGS that call them.
<command or url>: an http(s) URL speaks Streamable HTTP; anything else is a command line that starts a stdio server
(quote it: --mcp "node server.js --flag").

  --out <file>           write the catalog there (entries with the same targets are replaced, others kept);
                         default: print the catalog JSON on stdout
  --bindings-out <file>  write the bindings there (merged the same way); default: print an
                         export CAIRN_BINDINGS='…' line (on stdout with --out, else on stderr)
  --prefix <name>        targets are tool:<prefix>.<tool> (default: the server's name)
  --tool <name>          import only this tool (repeatable)
  --env KEY=VALUE        environment of a stdio server (repeatable; written into its bindings)
  --header "Name: value" header of an HTTP server (repeatable; written into its bindings)
  --timeout-ms N         how long to wait for the server (default 60000)
  --yes                  ask nothing: a tool whose annotations do not say whether it changes anything is
                         imported as mutating, the safe assumption (also without a terminal)

Side effects come from the tools' annotations: readOnlyHint → none; destructiveHint false with idempotentHint
true → idempotent; any other writing tool → mutating.
`;

interface Options {
  readonly server: McpServerAddress;
  readonly out: string | undefined;
  readonly bindingsOut: string | undefined;
  readonly prefix: string | undefined;
  readonly tools: readonly string[];
  readonly timeoutMs: number;
  readonly yes: boolean;
}

/** Splits a command line as a POSIX shell would for plain words, quotes and backslashes (no expansions). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (c === '\\' && i + 1 < line.length && (quote === undefined || '"\\$`'.includes(line[i + 1] as string))) {
      word = (word ?? '') + line[i + 1];
      i += 1;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (quote !== undefined) throw new UsageError(`--mcp has an unclosed ${quote} quote`);
  if (word !== undefined) words.push(word);
  return words;
}

function pairs(values: readonly string[], separator: '=' | ':', flag: string): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const record: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf(separator);
    const key = at < 0 ? '' : value.slice(0, at).trim();
    if (key === '')
      throw new UsageError(`--${flag} takes ${separator === '=' ? 'KEY=VALUE' : '"Name: value"'}, got "${value}"`);
    record[key] = value.slice(at + 1).trim();
  }
  return record;
}

function serverOf(mcp: string, env: readonly string[], headers: readonly string[]): McpServerAddress {
  if (/^https?:\/\//i.test(mcp.trim())) {
    if (env.length > 0) throw new UsageError('--env is for stdio servers; an HTTP server takes --header');
    const url = mcp.trim();
    if (!URL.canParse(url)) throw new UsageError(`--mcp: "${url}" is not a URL`);
    const h = pairs(headers, ':', 'header');
    return { transport: 'http', url, ...(h === undefined ? {} : { headers: h }) };
  }
  if (headers.length > 0) throw new UsageError('--header is for HTTP servers; a stdio server takes --env');
  const [command, ...args] = splitCommandLine(mcp);
  if (command === undefined) throw new UsageError('--mcp needs a command or a URL');
  const e = pairs(env, '=', 'env');
  return { transport: 'stdio', command, args, ...(e === undefined ? {} : { env: e }) };
}

function parseOptions(argv: readonly string[]): Options | typeof HELP {
  const { values, positionals } = parseStrict(argv, {
    mcp: { type: 'string' },
    out: { type: 'string' },
    'bindings-out': { type: 'string' },
    prefix: { type: 'string' },
    tool: { type: 'string', multiple: true },
    env: { type: 'string', multiple: true },
    header: { type: 'string', multiple: true },
    'timeout-ms': { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return HELP;
  if (positionals[0] !== 'import')
    throw new UsageError(
      positionals.length === 0 ? 'missing the subcommand (import)' : `unknown subcommand "${positionals[0]}"`,
    );
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  if (values.mcp === undefined) throw new UsageError('missing --mcp <command or url>');
  return {
    server: serverOf(values.mcp, values.env ?? [], values.header ?? []),
    out: values.out,
    bindingsOut: values['bindings-out'],
    prefix: values.prefix,
    tools: values.tool ?? [],
    timeoutMs: limit('timeout-ms', values['timeout-ms'], 60_000),
    yes: values.yes === true,
  };
}

interface Listing {
  readonly serverName: string | undefined;
  readonly tools: ListedTool[];
}

async function listTools(options: Options): Promise<Listing> {
  const connections = createMcpConnections();
  try {
    return await connections.withClient(
      options.server,
      async (client) => {
        const tools: ListedTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: options.timeoutMs });
          tools.push(...(page.tools as ListedTool[]));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return { serverName: client.getServerVersion()?.name, tools };
      },
      { timeoutMs: options.timeoutMs },
    );
  } finally {
    await connections.close();
  }
}

/** What the annotations say, or what the person answers, or mutating when nobody can answer. */
async function decideSideEffect(tool: ListedTool, options: Options, io: CliIo): Promise<SideEffectReading> {
  const reading = sideEffectOf(tool.annotations);
  if (reading !== undefined) return reading;
  if (!options.yes && io.ask !== undefined) {
    for (;;) {
      const answer = (
        await io.ask(`Does the tool "${terminalLine(tool.name)}" change anything (write, send, delete)? [Y/n] `)
      )
        .trim()
        .toLowerCase();
      if (answer === '' || answer === 'y' || answer === 'yes') return { sideEffect: 'mutating', reason: 'you said so' };
      if (answer === 'n' || answer === 'no') return { sideEffect: 'none', reason: 'you said so' };
    }
  }
  io.stderr(
    `cairn catalog import: warning: ${terminalLine(tool.name)} has no readOnlyHint or destructiveHint; imported as mutating ` +
      '(edit sideEffect in the catalog if it only reads)\n',
  );
  return { sideEffect: 'mutating', reason: 'not annotated: assumed' };
}

/** The entry, or why the catalog cannot hold it (checked by the catalog's own loader). */
function checkedEntry(entry: Capability): string | undefined {
  try {
    loadCatalog({ capabilities: [entry] });
    return undefined;
  } catch (error) {
    if (isCatalogError(error)) return error.message.replace(/^invalid catalog: /, '').replaceAll('/capabilities/0', '');
    throw error;
  }
}

async function existingCatalog(path: string): Promise<CatalogDocument | undefined> {
  const text = await readIfPresent('catalog', path);
  if (text === undefined) return undefined;
  try {
    parseCatalog(text);
  } catch (error) {
    if (isCatalogError(error)) throw new InputError(`cannot add to the catalog ${path}: ${error.message}`);
    throw error;
  }
  return JSON.parse(text) as CatalogDocument;
}

async function existingBindings(path: string): Promise<Record<string, unknown>> {
  const text = await readIfPresent('bindings', path);
  if (text === undefined) return {};
  try {
    return bindingsConfigFromJson(text);
  } catch (error) {
    if (isValidationError(error)) throw new InputError(`cannot add to the bindings ${path}: ${error.message}`);
    throw error;
  }
}

const shellQuoted = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;
// The server's tool names and descriptions are in the JSON too: escaped so `cat` of the file cannot run them either.
const pretty = (value: unknown): string => `${terminalJson(value, 2)}\n`;

async function importTools(options: Options, io: CliIo): Promise<number> {
  const server = describeServer(options.server);
  let listing: Listing;
  try {
    listing = await listTools(options);
  } catch (error) {
    // The message may end with the tail of a stdio server's stderr, over several lines.
    io.stderr(`cairn catalog import: cannot list the tools of ${server}: ${terminalBlock((error as Error).message)}\n`);
    return EXIT_NO;
  }
  const unknown = options.tools.filter((name) => !listing.tools.some((tool) => tool.name === name));
  const chosen =
    options.tools.length === 0 ? listing.tools : listing.tools.filter((t) => options.tools.includes(t.name));
  const prefix = options.prefix ?? listing.serverName ?? 'mcp';
  const entries: Capability[] = [];
  const bindings: Record<string, McpBindingConfig> = {};
  const problems = unknown.map((name) => `${name}: the server has no such tool`);
  for (const tool of chosen) {
    const { sideEffect, reason } = await decideSideEffect(tool, options, io);
    const entry = catalogEntry(tool, { prefix, sideEffect, server });
    const problem = checkedEntry(entry);
    if (problem !== undefined) {
      problems.push(`${tool.name}: left out, the catalog cannot hold it: ${problem}`);
      continue;
    }
    if (bindings[entry.target] !== undefined) {
      problems.push(`${tool.name}: left out, its target ${entry.target} is already another tool's`);
      continue;
    }
    entries.push(entry);
    bindings[entry.target] = bindingFor(options.server, tool.name);
    const unchecked = tool.outputSchema === undefined ? '; no output schema: its output is not checked' : '';
    io.stderr(`  ${entry.target}  ${sideEffect} (${reason})${unchecked}\n`);
  }
  for (const problem of problems) io.stderr(`cairn catalog import: ${terminalLine(problem)}\n`);

  const outPath = options.out === undefined ? undefined : resolve(io.cwd, options.out);
  const catalog = mergeCatalog(outPath === undefined ? undefined : await existingCatalog(outPath), entries);
  try {
    loadCatalog(catalog); // The whole file still loads (alternatives across old and new entries).
  } catch (error) {
    if (isCatalogError(error)) throw new InputError(`the merged catalog would not load: ${error.message}`);
    throw error;
  }
  const bindingsPath = options.bindingsOut === undefined ? undefined : resolve(io.cwd, options.bindingsOut);
  const allBindings = { ...(bindingsPath === undefined ? {} : await existingBindings(bindingsPath)), ...bindings };
  bindingsConfigFromJson(JSON.stringify(allBindings));

  if (outPath === undefined) io.stdout(pretty(catalog));
  else await writeFile(outPath, pretty(catalog));
  const exportLine = `export CAIRN_BINDINGS=${shellQuoted(terminalJson(allBindings))}\n`;
  if (bindingsPath !== undefined) await writeFile(bindingsPath, pretty(allBindings));
  else if (outPath !== undefined) io.stdout(exportLine);
  else io.stderr(exportLine);
  io.stderr(
    `cairn catalog import: ${entries.length} of ${chosen.length} tool${chosen.length === 1 ? '' : 's'} from ${server}` +
      `${outPath === undefined ? '' : ` → ${options.out}`}${bindingsPath === undefined ? '' : `, bindings → ${options.bindingsOut}`}\n`,
  );
  return problems.length === 0 ? EXIT_OK : EXIT_NO;
}

export const run: CommandRun = (argv, io) =>
  runLocalCommand(
    'catalog',
    USAGE,
    io,
    () => parseOptions(argv),
    (options) => importTools(options, io),
  );
