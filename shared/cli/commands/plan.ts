/**
 * `cairn plan "<objective>" [--mode DIRECT|DECOMPOSE] [--direct-target <target>] [--input <json>] [--catalog <file>]
 * [--max-steps N] [--max-depth N] [--model htn|bedrock|openai] [--model-id <id>] [--region <region>]
 * [--model-url <url>]`
 * Prints the validated plan as pretty JSON. Exit 0 planned; 1 the planner or the model could not produce a valid
 * plan; 2 bad usage (including a mode that does not fit the flags) or a catalog that cannot be read or loaded.
 * The default model is the embedded HTN planner (no AWS); the Bedrock and OpenAI adapters load only when asked for.
 */
import { isModelError, isPlannerError } from '../../errors.ts';
import type { PlanIssue } from '../../plan/issues.ts';
import { DEFAULT_LIMITS, type PlanLimits } from '../../plan/validate.ts';
import { plannerErrorCode } from '../../planner/errors.ts';
import { createHtnPlanModel } from '../../planner/htn/model.ts';
import { createPlanner, PLANNER_MODES, type PlannerMode, type PlanRequest } from '../../planner/planner.ts';
import type { PlanModel } from '../../ports/plan-model.ts';
import { terminalJson, terminalLine } from '../../terminal-text.ts';
import { catalogPathOf, loadCatalogFile } from '../catalog-file.ts';
import { type CliIo, type CommandRun, EXIT_NO, EXIT_OK, EXIT_USAGE, UsageError } from '../io.ts';
import { HELP, limit, parseStrict, runLocalCommand } from '../local-command.ts';

const USAGE = `usage: cairn plan "<objective>" [options]

  --mode DIRECT|DECOMPOSE   DIRECT: one step for --direct-target, no model; DECOMPOSE: the model plans
                            (default: DIRECT when --direct-target is given, DECOMPOSE otherwise)
  --direct-target <target>  the catalog target of the DIRECT step, e.g. tool:web.search
  --input <json>            DIRECT only: the step's input (JSON)
  --catalog <file>          capability catalog (default: the demo catalog)
  --max-steps N             step limit (default ${DEFAULT_LIMITS.maxSteps})
  --max-depth N             dependency depth limit (default ${DEFAULT_LIMITS.maxDepth})
  --model htn|bedrock|openai  htn: the embedded deterministic planner (default); bedrock: Amazon Bedrock
                            Converse; openai: a model behind an OpenAI-compatible endpoint (key: CAIRN_MODEL_API_KEY)
  --model-id <id>           the model id or name (required with --model bedrock and --model openai)
  --model-url <url>         the endpoint's base URL, e.g. http://localhost:11434/v1 (required with --model openai)
  --region <region>         the Bedrock region (default: the AWS SDK's)
`;

interface Options {
  readonly request: PlanRequest;
  readonly catalogPath: string | undefined;
  readonly limits: PlanLimits;
  readonly model:
    | { readonly kind: 'htn' }
    | { readonly kind: 'bedrock'; readonly modelId: string; readonly region?: string }
    | { readonly kind: 'openai'; readonly model: string; readonly baseUrl: string };
}

function parseMode(text: string | undefined): PlannerMode | undefined {
  if (text === undefined) return undefined;
  const mode = text.toUpperCase();
  if (!(PLANNER_MODES as readonly string[]).includes(mode))
    throw new UsageError(`--mode must be DIRECT or DECOMPOSE, got "${text}"`);
  return mode as PlannerMode;
}

function parseInput(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--input must be JSON: ${(error as Error).message}`);
  }
}

function parseOptions(argv: readonly string[]): Options | typeof HELP {
  const { values, positionals } = parseStrict(argv, {
    mode: { type: 'string' },
    'direct-target': { type: 'string' },
    input: { type: 'string' },
    catalog: { type: 'string' },
    'max-steps': { type: 'string' },
    'max-depth': { type: 'string' },
    model: { type: 'string' },
    'model-id': { type: 'string' },
    'model-url': { type: 'string' },
    region: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  const help = values.help === true;
  if (!help && positionals.length === 0) throw new UsageError('missing the objective');
  const kind = values.model ?? 'htn';
  if (kind !== 'htn' && kind !== 'bedrock' && kind !== 'openai')
    throw new UsageError(`--model must be htn, bedrock or openai, got "${kind}"`);
  if (kind !== 'htn' && !values['model-id']) throw new UsageError(`--model ${kind} needs --model-id <id>`);
  if (kind === 'openai' && !values['model-url']) throw new UsageError('--model openai needs --model-url <url>');
  const mode = parseMode(values.mode);
  const input = parseInput(values.input);
  const options: Options = {
    // Several words without quotes are one objective.
    request: {
      objective: positionals.join(' '),
      ...(mode === undefined ? {} : { mode }),
      ...(values['direct-target'] === undefined ? {} : { directTarget: values['direct-target'] }),
      ...(input === undefined ? {} : { input }),
    },
    catalogPath: values.catalog,
    limits: {
      maxSteps: limit('max-steps', values['max-steps'], DEFAULT_LIMITS.maxSteps),
      maxDepth: limit('max-depth', values['max-depth'], DEFAULT_LIMITS.maxDepth),
    },
    model:
      kind === 'bedrock'
        ? {
            kind,
            modelId: values['model-id'] as string,
            ...(values.region === undefined ? {} : { region: values.region }),
          }
        : kind === 'openai'
          ? { kind, model: values['model-id'] as string, baseUrl: values['model-url'] as string }
          : { kind: 'htn' },
  };
  return help ? HELP : options;
}

async function modelFor(options: Options, env: CliIo['env']): Promise<PlanModel> {
  if (options.model.kind === 'htn') return createHtnPlanModel();
  if (options.model.kind === 'openai') {
    const { createOpenAIPlanModel } = await import('../../adapters/openai/openai-plan-model.ts');
    const apiKey = env.CAIRN_MODEL_API_KEY?.trim();
    return createOpenAIPlanModel({
      baseUrl: options.model.baseUrl,
      model: options.model.model,
      ...(apiKey ? { apiKey } : {}),
    });
  }
  // Loaded only here so the default path never pays for the AWS SDK.
  const { createBedrockPlanModel, defaultBedrockClient } = await import('../../adapters/aws/bedrock-plan-model.ts');
  return createBedrockPlanModel({ client: defaultBedrockClient(options.model.region), modelId: options.model.modelId });
}

/** A model's answer and its endpoint's errors are anybody's text: each line keeps to one line, controls escaped. */
function reportFailure(error: unknown, io: CliIo): number {
  const line = (text: string) => io.stderr(`${terminalLine(text)}\n`);
  if (isPlannerError(error)) {
    const code = plannerErrorCode(error);
    line(`cairn plan: ${code ? `${code}: ` : ''}${error.message}`);
    const issues = error.context.issues;
    if (Array.isArray(issues))
      for (const i of issues as PlanIssue[]) line(`  ${i.code} ${i.path || '(root)'} ${i.message}`);
    return code === 'E_MODE' ? EXIT_USAGE : EXIT_NO;
  }
  if (isModelError(error)) {
    line(`cairn plan: ${error.message}${error.retryable ? ' (transient: try again)' : ''}`);
    return EXIT_NO;
  }
  throw error;
}

export const run: CommandRun = (argv, io) =>
  runLocalCommand(
    'plan',
    USAGE,
    io,
    () => parseOptions(argv),
    async (options) => {
      const catalog = await loadCatalogFile(catalogPathOf(io.cwd, options.catalogPath));
      try {
        const planner = createPlanner({ model: await modelFor(options, io.env), catalog, limits: options.limits });
        const plan = await planner.plan(options.request);
        io.stdout(`${terminalJson(plan, 2)}\n`);
        return EXIT_OK;
      } catch (error) {
        return reportFailure(error, io);
      }
    },
  );
