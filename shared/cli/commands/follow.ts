/**
 * Following a run for a long time (`--watch`, `cairn events --follow`): each read goes on through transient
 * failures (the API unreachable, 429, 502, 503, 504), with a growing wait between tries and a line on stderr saying
 * so, until the failures have lasted longer than an outage a watch should sit through; then the last failure
 * stands (exit 5). Whatever else the API answers (404, 401) ends the watch at once.
 */
import { type ApiCallError, type ApiClient, isApiCallError } from '../../api/client.ts';
import { type WatchEvent, watchRun } from '../../api/watch.ts';
import { terminalJson, terminalLine } from '../../terminal-text.ts';
import { type CliIo, EXIT_NO, EXIT_OK, EXIT_PAUSED } from '../io.ts';

const TRANSIENT_STATUSES = new Set([0, 429, 502, 503, 504]);

export const isTransient = (error: unknown): error is ApiCallError =>
  isApiCallError(error) && TRANSIENT_STATUSES.has(error.status);

export interface SteadyOptions {
  /** How long in all a streak of failures is waited through before the watch gives up (default 5 minutes). */
  readonly outageMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Tells a person what happened (one line, on stderr). */
  readonly notice: (line: string) => void;
}

const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;
const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `read`, tried again through transient failures for as long as `outageMs` of waiting allows. */
export async function steadily<T>(read: () => Promise<T>, options: SteadyOptions): Promise<T> {
  const outage = options.outageMs ?? 5 * 60_000;
  const sleep = options.sleep ?? defaultSleep;
  let waited = 0;
  for (let failures = 0; ; failures++) {
    try {
      const value = await read();
      if (failures > 0) options.notice('the API answers again; still watching');
      return value;
    } catch (error) {
      if (!isTransient(error) || waited >= outage) throw error;
      const wait = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** failures, outage - waited);
      options.notice(`${error.code}: ${error.message}; still watching, trying again in ${(wait / 1000).toFixed(1)} s`);
      await sleep(wait);
      waited += wait;
    }
  }
}

/** Exit code for where a watched run stopped: 0 complete, 3 paused, 1 failed or cancelled. */
export const exitCodeOf = (run: { readonly status: string }): number =>
  run.status === 'complete' ? EXIT_OK : run.status === 'paused' ? EXIT_PAUSED : EXIT_NO;

export interface WatchTo {
  readonly io: CliIo;
  /** The command's name (prefixes its stderr lines). */
  readonly name: string;
  /** JSON lines (one WatchEvent each) instead of text. */
  readonly json: boolean;
  readonly intervalMs: number;
  readonly steady?: Omit<SteadyOptions, 'notice'>;
}

/** Events read a page at a time while following (the API's largest page). */
const EVENT_PAGE = 1000;

/** The feed as watching reads it: a long poll, then every page that follows at once. */
async function nextEvents(
  client: Pick<ApiClient, 'listRunEvents'>,
  runId: string,
  from: string | undefined,
  waitSeconds: number,
  steady: <T>(read: () => Promise<T>) => Promise<T>,
): Promise<string | undefined> {
  let after = from;
  for (let wait = waitSeconds; ; wait = 0) {
    const query = { follow: '1' as const, wait, limit: EVENT_PAGE, ...(after === undefined ? {} : { after }) };
    const page = await steady(() => client.listRunEvents(runId, query));
    after = page.events.at(-1)?.seq ?? after;
    if (page.nextCursor === undefined) return after;
  }
}

/** Follows a run to its end (or a settled pause) and turns where it stopped into the exit code. */
export async function watchToExit(
  client: Pick<ApiClient, 'getWholeRun' | 'listRunEvents'>,
  runId: string,
  to: WatchTo,
): Promise<number> {
  const { io } = to;
  const notice = (line: string) => io.stderr(`cairn ${to.name}: ${terminalLine(line)}\n`);
  const steady = <T>(read: () => Promise<T>) => steadily(read, { ...to.steady, notice });
  const reader = {
    getRun: (id: string) => steady(() => client.getWholeRun(id)),
    nextEvents: (id: string, after: string | undefined, waitSeconds: number) =>
      nextEvents(client, id, after, waitSeconds, steady),
  };
  const run = await watchRun(reader, runId, {
    intervalMs: to.intervalMs,
    write: to.json ? () => {} : (line) => io.stdout(`${terminalLine(line)}\n`),
    ...(to.json ? { emit: (event: WatchEvent) => io.stdout(`${terminalJson(event)}\n`) } : {}),
  });
  return exitCodeOf(run);
}
