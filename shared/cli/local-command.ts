/**
 * What the commands that run without the API share (`validate`, `plan`, `webhook`): strict option parsing, usage
 * and `--help` handling, numeric limits, and inputs (files, standard input) that cannot be read or used.
 * Imports no API client and no AWS SDK, so these commands start fast.
 */
import { readFile } from 'node:fs/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { terminalBlock } from '../terminal-text.ts';
import { type CliIo, EXIT_OK, EXIT_USAGE, UsageError } from './io.ts';
import { didYouMean } from './suggest.ts';

/** A command's flag definitions, as `parseArgs` takes them. */
export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** An input that cannot be read or used: the command prints the message without its usage and exits 2. */
export class InputError extends Error {}

/** What a command's option parser returns for `--help` (after every other check). */
export const HELP = 'help';

/** Strict parsing (unknown flags are usage errors, with the nearest known flag suggested), positionals allowed. */
export function parseStrict<const O extends OptionsConfig>(argv: readonly string[], options: O) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options });
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
    const known = Object.keys(options).map((name) => `--${name}`);
    throw new UsageError(unknown === undefined ? message : `unknown option "${unknown}"${didYouMean(unknown, known)}`);
  }
}

/** A positive whole-number limit flag (`--max-steps N`), or the fallback when absent. */
export function limit(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${name} must be a positive integer, got "${text}"`);
  return Number(text);
}

/** Reads a named input file as text; an unreadable one is an InputError naming what it was. */
export async function readInputFile(what: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError(`cannot read the ${what} ${path}${code ? ` (${code})` : ''}`);
  }
}

/**
 * Parses the options, then runs the command body. A usage error prints the message and the usage (exit 2), `--help`
 * the usage (exit 0), an InputError from the body the message alone (exit 2).
 */
export async function runLocalCommand<T>(
  name: string,
  usage: string,
  io: CliIo,
  parse: () => T | typeof HELP,
  body: (options: T) => Promise<number>,
): Promise<number> {
  let options: T | typeof HELP;
  try {
    options = parse();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`cairn ${name}: ${error.message}\n\n${usage}`);
    return EXIT_USAGE;
  }
  if (options === HELP) {
    io.stdout(usage);
    return EXIT_OK;
  }
  try {
    return await body(options);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    // An input's message may quote the input (a catalog, a server's answer): its controls show as escapes.
    io.stderr(`cairn ${name}: ${terminalBlock(error.message)}\n`);
    return EXIT_USAGE;
  }
}
