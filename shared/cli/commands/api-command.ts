/**
 * What the commands that talk to the API share: flags, the connection (`--api` / CAIRN_API_URL, `--token` /
 * CAIRN_API_TOKEN), `--help`, error reporting and exit codes (io.ts), `--json` output, and the client's retries
 * (told on stderr). What the server says is anybody's text (an objective, a question, a tool's error): it reaches
 * the terminal through shared/terminal-text.ts, its controls shown as escapes.
 */
import {
  type ApiCallError,
  type ApiClient,
  ClientConfigError,
  connectionOf,
  createApiClient,
  describeCallError,
  type FetchLike,
  isApiCallError,
  type TransportOptions,
} from '../../api/client.ts';
import { DEFAULT_POLL_MS } from '../../api/watch.ts';
import { terminalBlock, terminalJson, terminalLine } from '../../terminal-text.ts';
import {
  type CliIo,
  type CommandRun,
  EXIT_NO,
  EXIT_OK,
  EXIT_UNAUTHORIZED,
  EXIT_UNREACHABLE,
  EXIT_USAGE,
  UsageError,
} from '../io.ts';
import { type OptionsConfig, parseStrict } from '../local-command.ts';
import { isTransient, type SteadyOptions } from './follow.ts';

export { EXIT_PAUSED } from '../io.ts';
export { exitCodeOf } from './follow.ts';

export const CONNECTION_HELP = `  --api <url>               the cairn API (default: CAIRN_API_URL, else http://127.0.0.1:3000)
  --token <token>           the API token (default: CAIRN_API_TOKEN)`;

export const WATCH_EXIT_HELP = `exit codes with --watch: 0 complete, 1 failed or cancelled, 3 paused (waiting for a person);
  --watch rides out the API being unreachable or busy for up to 5 minutes, saying so on stderr`;

/** The exit codes an API command may end with, for its usage. */
export const API_EXIT_HELP = `4 unauthorized or forbidden; 5 the API unreachable (or unavailable after retries)`;

/** How the CLI reaches the API; tests pass their own fetch, and waits that take no time. */
export interface CliDeps {
  readonly fetch?: FetchLike;
  readonly transport?: Omit<TransportOptions, 'onRetry'>;
  readonly steady?: Omit<SteadyOptions, 'notice'>;
}

/** The watch's patience as the deps set it (tests: waits that take no time). */
export const steadyOf = (deps: CliDeps): { steady?: Omit<SteadyOptions, 'notice'> } =>
  deps.steady === undefined ? {} : { steady: deps.steady };

/** The exit code of a call the API refused or that never reached it. */
export function exitCodeOfCall(error: ApiCallError): number {
  if (error.status === 401 || error.status === 403) return EXIT_UNAUTHORIZED;
  return isTransient(error) ? EXIT_UNREACHABLE : EXIT_NO;
}

export function positiveMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_POLL_MS;
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new UsageError(`--interval must be a positive integer, got "${text}"`);
  return Number(text);
}

/** Runs a command body, mapping configuration, usage and API failures to messages and exit codes. */
export async function guarded(name: string, usage: string, io: CliIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`cairn ${name}: ${error.message}\n\n${usage}`);
      return EXIT_USAGE;
    }
    if (error instanceof ClientConfigError) {
      io.stderr(`cairn ${name}: ${error.message}\n`);
      return EXIT_USAGE;
    }
    if (isApiCallError(error)) {
      io.stderr(
        describeCallError(error)
          .map((line) => `cairn ${name}: ${terminalLine(line)}\n`)
          .join(''),
      );
      return exitCodeOfCall(error);
    }
    throw error;
  }
}

export interface Flags {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: string[];
}

/** Strict flag parsing (unknown flags are usage errors); only string and boolean flags, none repeated. */
export function parseFlags(argv: readonly string[], options: OptionsConfig): Flags {
  const { values, positionals } = parseStrict(argv, options);
  return { values: values as Flags['values'], positionals };
}

export const stringFlag = (values: Flags['values'], name: string): string | undefined => {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
};

/** The client for `--api` / `--token` (or their environment variables); its retries are told on stderr. */
export const clientOf = (name: string, values: Flags['values'], io: CliIo, deps: CliDeps): ApiClient =>
  createApiClient(
    connectionOf({ api: stringFlag(values, 'api'), token: stringFlag(values, 'token') }, io.env),
    deps.fetch,
    {
      ...deps.transport,
      onRetry: ({ reason, delayMs }) =>
        io.stderr(`cairn ${name}: ${terminalLine(reason)}; trying again in ${(delayMs / 1000).toFixed(1)} s\n`),
    },
  );

/** The flags every API command takes after its own. */
const API_OPTIONS: OptionsConfig = {
  json: { type: 'boolean' },
  api: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export interface ApiCommandSpec {
  /** The command's name, as in `cairn <name>` (prefixes its error messages). */
  readonly name: string;
  readonly usage: string;
  /** The command's own flags; `--json`, `--api`, `--token` and `--help` are added. */
  readonly options: OptionsConfig;
}

export interface ApiCall extends Flags {
  readonly io: CliIo;
  /** The client for the connection flags; made on demand, so the command's own usage checks come first. */
  readonly client: () => ApiClient;
}

/**
 * An API command: parses its flags, answers `--help` with the usage, and runs the body under `guarded` (usage,
 * configuration and API failures become messages and exit codes).
 */
export const apiCommand =
  (spec: ApiCommandSpec, deps: CliDeps, body: (call: ApiCall) => Promise<number>): CommandRun =>
  (argv, io) =>
    guarded(spec.name, spec.usage, io, async () => {
      const flags = parseFlags(argv, { ...spec.options, ...API_OPTIONS });
      if (flags.values.help) {
        io.stdout(spec.usage);
        return EXIT_OK;
      }
      return body({ ...flags, io, client: () => clientOf(spec.name, flags.values, io, deps) });
    });

/** The single id a command takes: none, or more than one, is a usage error. */
export function oneId(positionals: readonly string[], missing: string, what: string): string {
  const [id, ...extra] = positionals;
  if (id === undefined) throw new UsageError(missing);
  if (extra.length > 0) throw new UsageError(`one ${what} at a time, got ${positionals.length}`);
  return id;
}

/**
 * Prints an answer: pretty JSON with `--json`, else the command's own text. The text is made terminal-safe as a
 * block, which keeps its newlines: a field that must stay on its line goes through terminalLine in `text`.
 */
export function printAnswer<T>(call: ApiCall, answer: T, text: (answer: T) => string): number {
  call.io.stdout(call.values.json ? `${terminalJson(answer, 2)}\n` : terminalBlock(text(answer)));
  return EXIT_OK;
}

/** Prints a one-line answer: pretty JSON with `--json`, else the line, every field of it kept on it. */
export const printLine = <T>(call: ApiCall, answer: T, line: (answer: T) => string): number =>
  printAnswer(call, answer, (a) => `${terminalLine(line(a))}\n`);
