/**
 * The console's run page in headless Chromium (playwright-core, Debian's chromium) against the embedded stack:
 * how long opening one folded box of a 2,000-step overview takes (the 1st to the 10th in turn), and what an open run
 * page costs on the wire in a minute: requests, and bytes received (headers and bodies as sent, compressed or not),
 * for a live 2,000-step run and for a run paused at an approval. Counted from when the page has drawn the run, so
 * the first read of the run is left out (and printed apart).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page, type Request } from 'playwright-core';
import { type LocalStack, startLocalStack } from '../../infra/local/boot.ts';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', process.env.CHROMIUM_PATH].find(
  (p) => p !== undefined && existsSync(p),
);
const LAYERS = 40;
const WIDTH = 50;
const TOKEN = 'bench-console-token';

export const hasChromium = (): boolean => CHROMIUM !== undefined;

type Step = Record<string, unknown>;

/** A step for `target` with the catalog's contracts, as a plan must carry them. */
function contracted(stack: LocalStack | undefined, target: string): Step {
  const capability = stack?.catalog.get(target);
  return capability ? { inputSchema: capability.inputSchema, outputSchema: capability.outputSchema } : {};
}

/** 40 layers of 50, each step waiting for two of the layer before; `target` runs `input`. */
function layered(target: string, input: (l: number, i: number) => unknown, stack?: LocalStack) {
  const contracts = contracted(stack, target);
  const steps: Step[] = [];
  for (let l = 0; l < LAYERS; l++)
    for (let i = 0; i < WIDTH; i++)
      steps.push({
        id: `s${l}-${i}`,
        title: `Layer ${l} task ${i}`,
        target,
        dependsOn: l === 0 ? [] : [`s${l - 1}-${i}`, `s${l - 1}-${(i + 1) % WIDTH}`],
        input: input(l, i),
        ...contracts,
      });
  return steps;
}

async function signedIn(browser: Browser, stack: LocalStack): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.url}/console/#token=${TOKEN}`);
  await page.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
  return page;
}

/** Opens boxes ~/1 … ~/n of a 2,000-step overview (answered by the page's request routing), timing each. */
async function openBoxes(browser: Browser, stack: LocalStack, count: number): Promise<number[]> {
  const page = await signedIn(browser, stack);
  const runId = 'bench-2000';
  const steps = layered('tool:conformance.echo', (_, i) => ({ value: i })).map((s) => ({
    ...s,
    parentId: null,
    status: 'succeeded',
    generation: 1,
    attempts: 1,
    output: null,
    error: null,
    confidence: null,
    startedAt: null,
    finishedAt: null,
    trace: [],
  }));
  await page.route(
    (url) => url.pathname === `/runs/${runId}`,
    async (route) => {
      const cursor = new URL(route.request().url()).searchParams.get('cursor');
      const from = cursor === null ? 0 : Number(cursor.slice(1));
      const next = from + 500 < steps.length ? { nextCursor: `p${from + 500}` } : {};
      const head = { runId, status: 'complete', objective: 'Migrate 2,000 services', revision: 1 };
      await route.fulfill({ json: { ...head, steps: steps.slice(from, from + 500), ...next } });
    },
  );
  await page.route(
    (url) => url.pathname === `/runs/${runId}/events`,
    (route) => route.fulfill({ json: { events: [] } }),
  );
  await page.goto(`${stack.url}/console/#/runs/${runId}`);
  await page.locator('svg.dag .node[data-id="~/1"]').waitFor({ timeout: 60_000 });
  const times: number[] = [];
  for (let k = 1; k <= count; k++) {
    const started = performance.now();
    await page.locator(`svg.dag .node[data-id="~/${k}"]`).focus();
    await page.keyboard.press('Enter');
    await page.locator(`svg.dag .node[data-id="s${k - 1}-0"]`).waitFor({ timeout: 120_000 });
    times.push(performance.now() - started);
  }
  await page.context().close();
  return times;
}

interface Traffic {
  readonly requests: number;
  readonly bytes: number;
}

/** Requests to the API (not the console's own files) and the bytes received for them, from `start` on. */
function meter(page: Page): { start(): void; read(): Traffic } {
  let counting = false;
  let requests = 0;
  let bytes = 0;
  const pending: Promise<void>[] = [];
  page.on('requestfinished', (request: Request) => {
    if (!counting || new URL(request.url()).pathname.startsWith('/console/')) return;
    requests += 1;
    pending.push(
      request.sizes().then((sizes) => {
        bytes += sizes.responseBodySize + sizes.responseHeadersSize;
      }),
    );
  });
  return {
    start() {
      counting = true;
    },
    read() {
      counting = false;
      return { requests, bytes };
    },
  };
}

async function watch(browser: Browser, stack: LocalStack, runId: string, seconds: number): Promise<Traffic> {
  const page = await signedIn(browser, stack);
  const traffic = meter(page);
  await page.goto(`${stack.url}/console/#/runs/${runId}`);
  await page.locator('svg.dag .node').first().waitFor({ timeout: 120_000 });
  await page.waitForTimeout(2000);
  traffic.start();
  await page.waitForTimeout(seconds * 1000);
  const counted = traffic.read();
  await page.context().close();
  return { requests: (counted.requests * 60) / seconds, bytes: (counted.bytes * 60) / seconds };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export async function runPageBench(options: { seconds: number; boxes: number }): Promise<void> {
  const stack = await startLocalStack({
    conformance: true,
    backoffMs: 5,
    demoDelayMs: 0,
    token: TOKEN,
    limits: { maxSteps: 2500, maxDepth: 100 },
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const times = await openBoxes(browser, stack, options.boxes);
    const line = (label: string, value: string) => console.log(`${label.padEnd(52)} ${value.padStart(12)}`);
    line('open a box of the 2,000-step overview: 1st', `${times[0]?.toFixed(0)} ms`);
    if (times.length >= 10) line('open a box: 10th', `${times[9]?.toFixed(0)} ms`);
    line(`open a box: slowest of ${times.length}`, `${Math.max(...times).toFixed(0)} ms`);

    const live = await stack.startRun({
      plan: {
        schemaVersion: 1,
        revision: 1,
        objective: 'bench: a live 2,000-step run',
        steps: layered('tool:conformance.sleep', () => ({ ms: 2500 }), stack),
      },
    });
    const liveTraffic = await watch(browser, stack, live, options.seconds);
    line('live 2,000-step run page: requests a minute', liveTraffic.requests.toFixed(0));
    line('live 2,000-step run page: received a minute', kb(liveTraffic.bytes));
    await stack.request('POST', `/runs/${live}/cancel`, {});

    const paused = await stack.startRun({
      plan: {
        schemaVersion: 1,
        revision: 1,
        objective: 'bench: a run paused at an approval',
        steps: [
          {
            id: 'prepare',
            title: 'Prepare',
            target: 'tool:conformance.echo',
            dependsOn: [],
            input: { value: 1 },
            ...contracted(stack, 'tool:conformance.echo'),
          },
          {
            ...contracted(stack, 'human:conformance.approver'),
            id: 'gate',
            title: 'Sign off',
            target: 'human:conformance.approver',
            dependsOn: ['prepare'],
            input: { note: 'bench' },
            approval: { question: 'Go on?', timeoutSeconds: 3600 },
          },
        ],
      },
    });
    for (let i = 0; i < 200; i++) {
      const { json } = await stack.request('GET', `/runs/${paused}`);
      if ((json as { status: string }).status === 'paused') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pausedTraffic = await watch(browser, stack, paused, options.seconds);
    line('paused run page: requests a minute', pausedTraffic.requests.toFixed(0));
    line('paused run page: received a minute', kb(pausedTraffic.bytes));
  } finally {
    await browser.close();
    await stack.close();
  }
}
