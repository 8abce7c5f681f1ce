/**
 * `cairn runs [--status s] [--limit n] [--all] [--json]`: the runs, newest first, one line each (id, status,
 * progress, when, objective). `--all` follows the pages to the end; without it, a page that has more says so.
 */
import type { RunStatus, RunSummary } from '../../api/client.ts';
import { RUN_STATUSES } from '../../plan/schema.ts';
import { terminalLine } from '../../terminal-text.ts';
import { type CommandRun, EXIT_OK, UsageError } from '../io.ts';
import { limit } from '../local-command.ts';
import { API_EXIT_HELP, apiCommand, type CliDeps, CONNECTION_HELP, printAnswer, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn runs [options]

  --status <status>         only runs in this status: ${RUN_STATUSES.join(', ')}
  --limit <n>               runs per page (default 20, at most 100)
  --all                     every run: follow the pages to the end
  --json                    print the runs as a JSON array
${CONNECTION_HELP}

exit codes: 0 listed (also when there are none); 1 refused by the API; 2 bad usage; ${API_EXIT_HELP}
`;

const MAX_PAGE = 100;

const isStatus = (text: string): text is RunStatus => (RUN_STATUSES as readonly string[]).includes(text);

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export const formatRunLine = (run: RunSummary): string =>
  terminalLine(
    `${run.runId}  ${run.status.padEnd(9)}  ${`${run.progress.done}/${run.progress.total}`.padStart(7)}  ` +
      `${run.createdAt}  ${oneLine(run.objective, 80)}${run.cancelling ? '  (cancelling)' : ''}`,
  );

export function createRunsCommand(deps: CliDeps = {}): CommandRun {
  const options = { status: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } } as const;
  return apiCommand({ name: 'runs', usage: USAGE, options }, deps, async (call) => {
    if (call.positionals.length > 0) throw new UsageError(`unexpected argument "${call.positionals[0]}"`);
    const status = stringFlag(call.values, 'status');
    if (status !== undefined && !isStatus(status))
      throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}`);
    const pageSize = limit('limit', stringFlag(call.values, 'limit'), 20);
    if (pageSize > MAX_PAGE) throw new UsageError(`--limit must be at most ${MAX_PAGE}`);
    const client = call.client();
    const runs: RunSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listRunsPage({
        ...(status === undefined ? {} : { status }),
        limit: pageSize,
        ...(cursor === undefined ? {} : { cursor }),
      });
      runs.push(...page.runs);
      cursor = page.nextCursor;
    } while (cursor !== undefined && call.values.all === true);
    printAnswer(call, runs, () => {
      if (runs.length === 0) return `no ${status === undefined ? '' : `${status} `}runs\n`;
      const more = cursor === undefined ? '' : '(more runs: cairn runs --all)\n';
      return `${runs.map(formatRunLine).join('\n')}\n${more}`;
    });
    return EXIT_OK;
  });
}

export const run: CommandRun = createRunsCommand();
