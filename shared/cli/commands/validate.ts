/**
 * `cairn validate <plan.json> [--catalog <file>] [--generated] [--json] [--max-steps N] [--max-depth N]`
 * Exit 0 valid, 1 invalid (one `CODE path message` line per error, or one JSON object with --json), 2 bad usage or
 * a plan/catalog file that cannot be read or loaded. Imports only the pure plan modules, so it starts fast.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isCatalogError } from '../../errors.ts';
import { type Catalog, parseCatalog } from '../../plan/catalog.ts';
import { DEFAULT_LIMITS, type PlanLimits, validateText } from '../../plan/validate.ts';
import { type CommandRun, EXIT_NO, EXIT_OK, EXIT_USAGE, UsageError } from '../io.ts';

export const DEFAULT_CATALOG_PATH = fileURLToPath(new URL('../../catalog/demo.json', import.meta.url));

const USAGE = `usage: cairn validate <plan.json> [--catalog <file>] [--generated] [--json] [--max-steps N] [--max-depth N]

  --catalog <file>  capability catalog to check targets and contracts against (default: the demo catalog)
  --generated       treat the plan as untrusted: only pending steps, no results or errors
  --json            print one JSON object: {"valid":true} or {"valid":false,"errors":[...]}
  --max-steps N     step limit (default ${DEFAULT_LIMITS.maxSteps})
  --max-depth N     dependency depth limit (default ${DEFAULT_LIMITS.maxDepth})
`;

interface Options {
  readonly planPath: string;
  readonly catalogPath: string | undefined;
  readonly generated: boolean;
  readonly json: boolean;
  readonly limits: PlanLimits;
  readonly help: boolean;
}

function limit(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${name} must be a positive integer, got "${text}"`);
  return Number(text);
}

function parseOptions(argv: readonly string[]): Options {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        catalog: { type: 'string' },
        generated: { type: 'boolean' },
        json: { type: 'boolean' },
        'max-steps': { type: 'string' },
        'max-depth': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  }
  try {
    parsed = parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const help = values.help === true;
  if (!help && positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'missing the plan file' : 'expected exactly one plan file');
  return {
    planPath: positionals[0] ?? '',
    catalogPath: values.catalog,
    generated: values.generated === true,
    json: values.json === true,
    limits: {
      maxSteps: limit('max-steps', values['max-steps'], DEFAULT_LIMITS.maxSteps),
      maxDepth: limit('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
    },
    help,
  };
}

class InputFileError extends Error {}

async function readText(what: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputFileError(`cannot read the ${what} ${path}${code ? ` (${code})` : ''}`);
  }
}

async function loadCatalogFile(path: string): Promise<Catalog> {
  const text = await readText('catalog', path);
  try {
    return parseCatalog(text);
  } catch (error) {
    if (isCatalogError(error)) throw new InputFileError(`cannot use the catalog ${path}: ${error.message}`);
    throw error;
  }
}

export const run: CommandRun = async (argv, io) => {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`cairn validate: ${error.message}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (options.help) {
    io.stdout(USAGE);
    return EXIT_OK;
  }
  let text: string;
  let catalog: Catalog;
  try {
    const catalogPath = options.catalogPath === undefined ? DEFAULT_CATALOG_PATH : resolve(io.cwd, options.catalogPath);
    [text, catalog] = await Promise.all([
      readText('plan', resolve(io.cwd, options.planPath)),
      loadCatalogFile(catalogPath),
    ]);
  } catch (error) {
    if (!(error instanceof InputFileError)) throw error;
    io.stderr(`cairn validate: ${error.message}\n`);
    return EXIT_USAGE;
  }
  const result = validateText(text, catalog, options.limits, { generated: options.generated });
  if (options.json) {
    io.stdout(`${JSON.stringify(result.valid ? { valid: true } : { valid: false, errors: result.errors })}\n`);
  } else if (result.valid) {
    io.stdout(`valid: ${result.plan.steps.length} step${result.plan.steps.length === 1 ? '' : 's'}\n`);
  } else {
    io.stdout(result.errors.map((e) => `${e.code} ${e.path || '(root)'} ${e.message}\n`).join(''));
  }
  return result.valid ? EXIT_OK : EXIT_NO;
};
