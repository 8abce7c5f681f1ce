/**
 * `cairn events <runId> [--follow] [--after <seq>] [--json]`: the run's audit log, oldest first, one line per event
 * (JSON lines with `--json`). `--follow` keeps reading what is new (`?after=` the last seq) until the run finishes
 * (its RunFinished, with no RunReopened after it), riding out an API that is briefly unreachable or busy.
 */
import type { ApiClient, RunEvent } from '../../api/client.ts';
import { DEFAULT_POLL_MS } from '../../api/watch.ts';
import { terminalJson, terminalLine } from '../../terminal-text.ts';
import { type CliIo, type CommandRun, EXIT_NO, EXIT_OK, EXIT_PAUSED, UsageError } from '../io.ts';
import {
  API_EXIT_HELP,
  apiCommand,
  type CliDeps,
  CONNECTION_HELP,
  oneId,
  positiveMs,
  stringFlag,
} from './api-command.ts';
import { steadily } from './follow.ts';

const USAGE = `usage: cairn events <runId> [options]

  --follow                  keep printing new events until the run finishes
  --after <seq>             only the events after this one (an event's seq)
  --interval <ms>           polling interval of --follow (default ${DEFAULT_POLL_MS})
  --json                    one JSON object per line
${CONNECTION_HELP}

exit codes: 0 listed; with --follow, as the run finished: 0 complete, 1 failed or cancelled, 3 paused;
1 refused by the API (an unknown run is 404); 2 bad usage; ${API_EXIT_HELP}
`;

const PREVIEW_CHARS = 160;
const OWN_FIELDS = new Set(['runId', 'stepId', 'generation']);

/** One readable line: when, what, which step, and the rest of the event's detail as compact JSON. */
export function formatEvent(event: RunEvent): string {
  const where = event.stepId === undefined ? '' : `  ${event.stepId}${event.generation ? `#${event.generation}` : ''}`;
  const rest = Object.fromEntries(Object.entries(event.detail).filter(([key]) => !OWN_FIELDS.has(key)));
  const json = Object.keys(rest).length === 0 ? '' : JSON.stringify(rest);
  const detail = json.length > PREVIEW_CHARS ? `${json.slice(0, PREVIEW_CHARS - 1)}…` : json;
  return terminalLine(`${event.at}  ${event.type}${where}${detail ? `  ${detail}` : ''}`);
}

const FINISHED_EXIT: Readonly<Record<string, number>> = { complete: EXIT_OK, paused: EXIT_PAUSED };

interface Reader {
  readonly client: Pick<ApiClient, 'listRunEvents'>;
  readonly runId: string;
  readonly io: CliIo;
  readonly json: boolean;
}

/** Prints every event after `after`, page by page; returns the last seq and the run's last RunFinished state. */
async function printNew(reader: Reader, after: string | undefined, read = reader.client.listRunEvents) {
  let cursor = after;
  let finished: string | undefined;
  for (;;) {
    const page = await read(reader.runId, cursor === undefined ? {} : { after: cursor });
    for (const event of page.events) {
      reader.io.stdout(reader.json ? `${terminalJson(event)}\n` : `${formatEvent(event)}\n`);
      if (event.type === 'RunFinished') finished = String(event.detail.state ?? 'complete');
      if (event.type === 'RunReopened') finished = undefined;
    }
    cursor = page.events.at(-1)?.seq ?? cursor;
    if (page.nextCursor === undefined) return { cursor, finished };
  }
}

export function createEventsCommand(deps: CliDeps = {}): CommandRun {
  const options = { follow: { type: 'boolean' }, after: { type: 'string' }, interval: { type: 'string' } } as const;
  return apiCommand({ name: 'events', usage: USAGE, options }, deps, async (call) => {
    const runId = oneId(call.positionals, 'missing the run id', 'run id');
    const intervalMs = positiveMs(stringFlag(call.values, 'interval'));
    const after = stringFlag(call.values, 'after');
    if (after !== undefined && after.trim() === '') throw new UsageError('--after must not be blank');
    const client = call.client();
    const reader: Reader = { client, runId, io: call.io, json: call.values.json === true };
    if (call.values.follow !== true) {
      await printNew(reader, after);
      return EXIT_OK;
    }
    const notice = (line: string) => call.io.stderr(`cairn events: ${terminalLine(line)}\n`);
    const steadyRead: typeof client.listRunEvents = (id, query) =>
      steadily(() => client.listRunEvents(id, query), { ...deps.steady, notice });
    const sleep = deps.steady?.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
    let { cursor, finished } = await printNew(reader, after, steadyRead);
    while (finished === undefined) {
      await sleep(intervalMs);
      // A RunFinished ends the follow unless a RunReopened came after it in the same read.
      ({ cursor, finished } = await printNew(reader, cursor, steadyRead));
    }
    return FINISHED_EXIT[finished] ?? EXIT_NO;
  });
}

export const run: CommandRun = createEventsCommand();
