/**
 * Which runs a page of `GET /runs` lists: newest first, by stored status, and (with `q`) only those whose objective
 * or run id contains the text. The store has no index on text, so a search reads pages of runs in order and keeps
 * the matches, up to `limit` of them or SEARCH_SCAN_LIMIT runs read, whichever comes first; the cursor then
 * continues after the last run read, so a search that found little in its share of runs goes on where it stopped.
 */
import type { RunStatus } from '../plan/schema.ts';
import type { RunPosition, RunRecord, Store } from '../ports/store.ts';

/** The most runs one search request reads from the store before it answers what it found so far. */
export const SEARCH_SCAN_LIMIT = 1000;
const SEARCH_PAGE = 100;

export interface RunQuery {
  /** Whose runs: only this tenant's index partitions are read. */
  readonly tenant: string;
  readonly limit: number;
  readonly status?: RunStatus;
  /** Case-insensitive text the objective or the run id contains. */
  readonly text?: string;
  readonly before?: RunPosition;
}

export interface FoundRuns {
  readonly runs: RunRecord[];
  /** Where the next page starts, when more may follow. */
  readonly next?: RunPosition;
}

const newestFirst = (a: RunRecord, b: RunRecord): number =>
  a.createdAt === b.createdAt ? b.runId.localeCompare(a.runId) : b.createdAt.localeCompare(a.createdAt);

const positionOf = (run: RunRecord): RunPosition => ({ createdAt: run.createdAt, runId: run.runId });

/** One page of stored runs; `paused` is derived from a running run's steps, so both stored states are read. */
async function storedPage(
  store: Store,
  tenant: string,
  limit: number,
  status: RunStatus | undefined,
  before: RunPosition | undefined,
): Promise<FoundRuns> {
  const stored: readonly (RunStatus | undefined)[] =
    status === 'paused' || status === 'running' ? ['running', 'paused'] : [status];
  const pages = await Promise.all(
    stored.map((s) => store.listRuns({ tenant, ...(s ? { status: s } : {}), limit, ...(before ? { before } : {}) })),
  );
  const runs = pages.flat().sort(newestFirst).slice(0, limit);
  // More may follow when any stored state filled its page; the next page starts after the last run read.
  const last = runs.at(-1);
  const more = last !== undefined && pages.some((page) => page.length === limit);
  return more ? { runs, next: positionOf(last) } : { runs };
}

export function matchesText(run: Pick<RunRecord, 'objective' | 'runId'>, text: string): boolean {
  const needle = text.trim().toLowerCase();
  return run.objective.toLowerCase().includes(needle) || run.runId.toLowerCase().includes(needle);
}

export async function findRuns(store: Store, query: RunQuery): Promise<FoundRuns> {
  const { text } = query;
  if (text === undefined || text.trim() === '')
    return storedPage(store, query.tenant, query.limit, query.status, query.before);
  const found: RunRecord[] = [];
  let before = query.before;
  for (let scanned = 0; scanned < SEARCH_SCAN_LIMIT; ) {
    const page = await storedPage(store, query.tenant, SEARCH_PAGE, query.status, before);
    for (const [index, run] of page.runs.entries()) {
      if (!matchesText(run, text)) continue;
      found.push(run);
      // A full page answers at once and continues right after its last match.
      if (found.length === query.limit) {
        const more = index < page.runs.length - 1 || page.next !== undefined;
        return more ? { runs: found, next: positionOf(run) } : { runs: found };
      }
    }
    scanned += page.runs.length;
    if (page.next === undefined) return { runs: found };
    before = page.next;
  }
  return before === undefined ? { runs: found } : { runs: found, next: before };
}
