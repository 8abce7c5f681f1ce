/**
 * `cairn budget <runId> [--max-tokens N] [--max-cost-usd X] [--max-seconds S] [--max-replans N] [--json]`: raises
 * the limits of a run paused for its budget (`budget_exhausted`) or its replan limit (`max_replans`); the run goes on
 * where it paused. Each limit named must be larger than the run's now (422 E_LIMIT_NOT_RAISED), and the raise must let
 * the run go on (422 E_STILL_OVER_LIMIT); a run not paused for a limit is refused (409 E_NOT_HELD_FOR_LIMIT).
 */
import { type CommandRun, UsageError } from '../io.ts';
import {
  API_EXIT_HELP,
  apiCommand,
  type CliDeps,
  CONNECTION_HELP,
  oneId,
  printLine,
  stringFlag,
} from './api-command.ts';

const USAGE = `usage: cairn budget <runId> [options]

  --max-tokens <n>          raise the plan budget's token limit to n
  --max-cost-usd <x>        raise the plan budget's dollar limit to x
  --max-seconds <s>         raise the plan budget's seconds limit (counted from the run's creation) to s
  --max-replans <n>         raise the run's replan limit to n
  --json                    print the answer as JSON
${CONNECTION_HELP}

Name at least one limit; each must be larger than the run's now.

exit codes: 0 raised (the run goes on); 1 refused by the API (not paused for a limit: 409; a limit not raised, or
the run still held: 422; an unknown run: 404); 2 bad usage; ${API_EXIT_HELP}
`;

/** The flags, as the API names the limits, and whether each takes only whole numbers. */
const FLAGS = [
  ['max-tokens', 'maxTokens', true],
  ['max-cost-usd', 'maxCostUsd', false],
  ['max-seconds', 'maxSeconds', false],
  ['max-replans', 'maxReplans', true],
] as const;

type Limits = { -readonly [K in (typeof FLAGS)[number][1]]?: number };

function limitsOf(values: Parameters<typeof stringFlag>[0]): Limits {
  const limits: Limits = {};
  for (const [flag, name, whole] of FLAGS) {
    const text = stringFlag(values, flag);
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)))
      throw new UsageError(`--${flag} must be a positive ${whole ? 'whole ' : ''}number, not ${JSON.stringify(text)}`);
    limits[name] = value;
  }
  if (Object.keys(limits).length === 0)
    throw new UsageError('name at least one limit: --max-tokens, --max-cost-usd, --max-seconds or --max-replans');
  return limits;
}

const describe = (limits: Readonly<Record<string, number | undefined>>): string =>
  Object.entries(limits)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');

export function createBudgetCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand(
    {
      name: 'budget',
      usage: USAGE,
      options: Object.fromEntries(FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
    },
    deps,
    async (call) => {
      const runId = oneId(call.positionals, 'missing the run id', 'run id');
      const limits = limitsOf(call.values);
      const answer = await call.client().raiseBudget(runId, limits);
      return printLine(
        call,
        answer,
        () =>
          `run ${answer.runId} is ${answer.status}: limits now ${describe(answer.limits)} (cairn status ${answer.runId} --watch)`,
      );
    },
  );
}

export const run: CommandRun = createBudgetCommand();
