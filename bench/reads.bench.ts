/**
 * `npm run bench:reads`: reads cost what they show. The embedded stack runs a 20-step and a 2,000-step plan of
 * zero-work steps to completion, then reads the first page of GET /runs/{id} of each over HTTP, alternately
 * (READS_ROUNDS rounds, default 40, after a warm-up that leaves the plan revisions cached as in a warm Lambda), and
 * prints the median time and size of each page and their ratio against the budgets: the 2,000-step run's first page
 * within 3× the 20-step run's time, and within 1 MB. For scale it also prints the read of every page of the large
 * run. Then, with 120 runs stored (the 2,000-step one among them), GET /runs?limit=100 against GET /runs?limit=1,
 * alternately: the budget is 3×, whatever the runs hold (a listing reads no step, and no head of an ended run). It is
 * judged on the API's own time, the page asked for uncompressed; the gzipped page is printed beside it, its time
 * including the client's inflating (fetch inflates through streams: about 5 ms for this 50 KB page).
 * Everything printed is measured in this one run; the exit code is 1 when a budget is missed.
 */
import { availableParallelism, loadavg } from 'node:os';
import { startLocalStack } from '../infra/local/boot.ts';
import { MAX_PAGE_BYTES } from '../shared/api/run-page.ts';
import { CONFORMANCE_TARGETS as T } from '../shared/capabilities/conformance.ts';
import { layered, random, toSteps } from './engine/dags.ts';
import { createDriver } from './engine/drive.ts';
import { fmt } from './engine/report.ts';

const ROUNDS = Number(process.env.READS_ROUNDS ?? 40);
const SEED = Number(process.env.BENCH_SEED ?? 7);
const RUN_TIMEOUT_MS = 300_000;

const load = (): string =>
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on ${availableParallelism()} cores`;

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

async function main() {
  const stack = await startLocalStack({
    conformance: true,
    backoffMs: 5,
    demoDelayMs: 0,
    limits: { maxSteps: 2000, maxDepth: 2000 },
  });
  const driver = createDriver(stack, { timeoutMs: RUN_TIMEOUT_MS });
  const headers = { authorization: `Bearer ${stack.token}` };
  // Each step returns about 150 bytes (a larger input would take the 2,000-step plan past the 1 MB body limit).
  const stepsOf = (layers: number, width: number) =>
    toSteps(stack, layered(layers, width, random(SEED)), T.echo, (node) => ({
      input: { value: `${node.id} `.repeat(16) },
    }));
  try {
    const small = await driver.run(stepsOf(4, 5), 'bench reads: 20 steps');
    const large = await driver.run(stepsOf(20, 100), 'bench reads: 2,000 steps');
    if (small.status !== 'complete' || large.status !== 'complete')
      throw new Error(`runs ended ${small.status} and ${large.status}`);

    const firstPage = async (runId: string) => {
      const t0 = performance.now();
      const response = await fetch(`${stack.url}/runs/${runId}`, { headers });
      const text = await response.text();
      const ms = performance.now() - t0;
      if (response.status !== 200) throw new Error(`GET /runs/${runId} answered ${response.status}`);
      const body = JSON.parse(text) as { steps: unknown[]; nextCursor?: string };
      return { ms, bytes: Buffer.byteLength(text), steps: body.steps.length, next: body.nextCursor };
    };
    const wholeRun = async (runId: string) => {
      const t0 = performance.now();
      let pages = 0;
      let cursor: string | undefined;
      do {
        const query = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`;
        const response = await fetch(`${stack.url}/runs/${runId}${query}`, { headers });
        cursor = ((await response.json()) as { nextCursor?: string }).nextCursor;
        pages += 1;
      } while (cursor !== undefined);
      return { ms: performance.now() - t0, pages };
    };

    for (let i = 0; i < 5; i++) {
      await firstPage(small.runId);
      await firstPage(large.runId);
    }
    const times = { small: [] as number[], large: [] as number[] };
    let sizes = { small: 0, large: 0, largeSteps: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternated, the order swapped every round: a machine growing busier favours neither.
      const order = round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
      for (const which of order) {
        const page = await firstPage(which === 'small' ? small.runId : large.runId);
        times[which].push(page.ms);
        if (which === 'small') sizes = { ...sizes, small: page.bytes };
        else sizes = { ...sizes, large: page.bytes, largeSteps: page.steps };
      }
    }
    const whole = await wholeRun(large.runId);

    // More runs, so a page of 100 is full: 118 small ones beside the two above, ten at a time.
    for (let started = 0; started < 118; started += 10)
      await Promise.all(
        Array.from({ length: Math.min(10, 118 - started) }, (_, i) =>
          driver.run(stepsOf(1, 3), `bench reads: listed run ${started + i}`),
        ),
      );
    const listPage = async (limit: number, encoding = 'identity') => {
      const t0 = performance.now();
      const response = await fetch(`${stack.url}/runs?limit=${limit}`, {
        headers: { ...headers, 'accept-encoding': encoding },
      });
      const body = (await response.json()) as { runs: unknown[] };
      if (response.status !== 200 || body.runs.length !== limit)
        throw new Error(`GET /runs?limit=${limit} answered ${response.status} with ${body.runs.length} runs`);
      return performance.now() - t0;
    };
    for (let i = 0; i < 5; i++) {
      await listPage(1);
      await listPage(100);
    }
    const lists = { one: [] as number[], hundred: [] as number[], gzipped: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [1, 100] : [100, 1];
      for (const limit of order) (limit === 1 ? lists.one : lists.hundred).push(await listPage(limit));
      lists.gzipped.push(await listPage(100, 'gzip'));
    }
    const listRatio = median(lists.hundred) / median(lists.one);
    const listOk = listRatio <= 3;
    const ratio = median(times.large) / median(times.small);
    const timeOk = ratio <= 3;
    const sizeOk = sizes.large <= MAX_PAGE_BYTES;
    console.log(`reads bench, ${ROUNDS} rounds alternated; ${load()}`);
    console.log(
      `GET /runs/{id} first page: 20-step run ${fmt(median(times.small), 2)} ms, ${fmt(sizes.small / 1024, 1)} KB; ` +
        `2,000-step run ${fmt(median(times.large), 2)} ms, ${fmt(sizes.large / 1024, 1)} KB (${sizes.largeSteps} steps)`,
    );
    console.log(
      `time ratio 2,000 / 20 steps ${fmt(ratio, 2)} (target ≤ 3: ${timeOk ? 'pass' : 'MISS'}); ` +
        `page size ${fmt(sizes.large / 1e6, 3)} MB (target ≤ 1 MB: ${sizeOk ? 'pass' : 'MISS'})`,
    );
    console.log(`every page of the 2,000-step run: ${whole.pages} pages in ${fmt(whole.ms, 0)} ms`);
    console.log(
      `GET /runs of 120 runs: limit=1 ${fmt(median(lists.one), 2)} ms, limit=100 ${fmt(median(lists.hundred), 2)} ms; ` +
        `ratio ${fmt(listRatio, 2)} (target ≤ 3: ${listOk ? 'pass' : 'MISS'}); limit=100 gzipped, inflated by fetch ` +
        `${fmt(median(lists.gzipped), 2)} ms`,
    );
    if (!timeOk || !sizeOk || !listOk) process.exitCode = 1;
  } finally {
    driver.close();
    await stack.close();
  }
}

await main();
