/**
 * `cairn validate <plan.json> [--catalog <file>] [--generated] [--json] [--max-steps N] [--max-depth N]`
 * Exit 0 valid, 1 invalid (one `CODE path message` line per error, or one JSON object with --json), 2 bad usage or
 * a plan/catalog file that cannot be read or loaded. Imports only the pure plan modules, so it starts fast.
 */
import { resolve } from 'node:path';
import { DEFAULT_LIMITS, type PlanLimits, validateText } from '../../plan/validate.ts';
import { terminalJson, terminalLine } from '../../terminal-text.ts';
import { catalogPathOf, loadCatalogFile } from '../catalog-file.ts';
import { type CommandRun, EXIT_NO, EXIT_OK, UsageError } from '../io.ts';
import { HELP, limit, parseStrict, readInputFile, runLocalCommand } from '../local-command.ts';

export { DEFAULT_CATALOG_PATH } from '../catalog-file.ts';

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
}

function parseOptions(argv: readonly string[]): Options | typeof HELP {
  const { values, positionals } = parseStrict(argv, {
    catalog: { type: 'string' },
    generated: { type: 'boolean' },
    json: { type: 'boolean' },
    'max-steps': { type: 'string' },
    'max-depth': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const help = values.help === true;
  if (!help && positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'missing the plan file' : 'expected exactly one plan file');
  const options: Options = {
    planPath: positionals[0] ?? '',
    catalogPath: values.catalog,
    generated: values.generated === true,
    json: values.json === true,
    limits: {
      maxSteps: limit('max-steps', values['max-steps'], DEFAULT_LIMITS.maxSteps),
      maxDepth: limit('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
    },
  };
  return help ? HELP : options;
}

export const run: CommandRun = (argv, io) =>
  runLocalCommand(
    'validate',
    USAGE,
    io,
    () => parseOptions(argv),
    async (options) => {
      const [text, catalog] = await Promise.all([
        readInputFile('plan', resolve(io.cwd, options.planPath)),
        loadCatalogFile(catalogPathOf(io.cwd, options.catalogPath)),
      ]);
      const result = validateText(text, catalog, options.limits, { generated: options.generated });
      if (options.json) {
        io.stdout(`${terminalJson(result.valid ? { valid: true } : { valid: false, errors: result.errors })}\n`);
      } else if (result.valid) {
        io.stdout(`valid: ${result.plan.steps.length} step${result.plan.steps.length === 1 ? '' : 's'}\n`);
      } else {
        // A message may quote the plan, which a model may have written: one line each, controls escaped.
        io.stdout(
          result.errors.map((e) => `${terminalLine(`${e.code} ${e.path || '(root)'} ${e.message}`)}\n`).join(''),
        );
      }
      return result.valid ? EXIT_OK : EXIT_NO;
    },
  );
