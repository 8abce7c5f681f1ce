/**
 * Driving bench:scale's runs through the API: start them (a bounded number of requests at once), wait for each to
 * end (polled in rounds, a bounded number of reads at once), then count its steps by status, paging through
 * GET /runs/{id}.
 */

export type Api = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Readonly<Record<string, string>>,
) => Promise<{ status: number; json: unknown }>;

export function apiOf(url: string, token: string): Api {
  return async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: await response.json().catch(() => null) };
  };
}

/** Runs `work` over `items`, `limit` at a time. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

export interface Started {
  readonly runIds: string[];
  /** The index in `plans` of each run started, in the order of `runIds`. */
  readonly started: number[];
  /** POST /runs answers other than 202, by status. */
  readonly refused: Record<string, number>;
}

/**
 * POST /runs as a careful client does: a 503 (its plan checks all busy, a store call or a start throttled) is sent
 * again after a second with the same Idempotency-Key, so a run is never made twice.
 */
async function postRun(api: Api, plan: unknown, key: string): Promise<{ status: number; json: unknown }> {
  for (let tries = 1; ; tries++) {
    const answer = await api('POST', '/runs', { plan }, { 'idempotency-key': key });
    if (answer.status !== 503 || tries >= 30) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

export async function startRuns(api: Api, plans: readonly unknown[], concurrency: number): Promise<Started> {
  const refused: Record<string, number> = {};
  const prefix = `scale-${Date.now().toString(36)}`;
  const answers = await pool(
    plans.map((plan, index) => ({ plan, index })),
    concurrency,
    ({ plan, index }) => postRun(api, plan, `${prefix}-${index}`),
  );
  const runIds: string[] = [];
  const started: number[] = [];
  answers.forEach((answer, index) => {
    if (answer.status === 202) {
      runIds.push((answer.json as { runId: string }).runId);
      started.push(index);
    } else refused[String(answer.status)] = (refused[String(answer.status)] ?? 0) + 1;
  });
  return { runIds, refused, started };
}

export const TERMINAL = new Set(['complete', 'failed', 'cancelled']);

/** Waits until every run is terminal (or paused) or `timeoutMs` passed; the runs' last statuses. */
export async function waitForRuns(
  api: Api,
  runIds: readonly string[],
  options: { readonly concurrency: number; readonly timeoutMs: number; readonly onRound?: (open: number) => void },
): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  const deadline = Date.now() + options.timeoutMs;
  let open = [...runIds];
  while (open.length > 0 && Date.now() < deadline) {
    await pool(open, options.concurrency, async (runId) => {
      const { json } = await api('GET', `/runs/${runId}?limit=1`).catch(() => ({ json: null }));
      const status = (json as { status?: string } | null)?.status;
      if (status !== undefined) statuses.set(runId, status);
    });
    open = open.filter((runId) => {
      const status = statuses.get(runId);
      return status === undefined || (!TERMINAL.has(status) && status !== 'paused');
    });
    options.onRound?.(open.length);
    if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return statuses;
}

/** A run's steps by status, paged through GET /runs/{id}. */
export async function stepStatuses(api: Api, runId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let cursor: string | undefined;
  do {
    const { json } = await api('GET', `/runs/${runId}?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    const page = json as { steps?: { status: string }[]; nextCursor?: string } | null;
    for (const step of page?.steps ?? []) counts[step.status] = (counts[step.status] ?? 0) + 1;
    cursor = page?.nextCursor;
  } while (cursor !== undefined);
  return counts;
}

/** Adds counts into a total. */
export function addCounts(total: Record<string, number>, more: Readonly<Record<string, number>>): void {
  for (const [key, n] of Object.entries(more)) total[key] = (total[key] ?? 0) + n;
}
