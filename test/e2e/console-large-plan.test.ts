/**
 * The console at 2,000 steps in a real browser: the run view is served in four pages of 500 (the API's default
 * page), the page reads them all, draws an overview of folded bands (at most 100 boxes), and unfolds one from the
 * keyboard. The 2,000-step run view is answered by the browser's request routing (a run of that size belongs to the
 * scale tests, not to a view test); everything else is the local stack. Also: a mutating step shows its rollbackHint.
 */
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type LocalStack, plan, startTestStack, step, waitForRun } from '../support/local-stack.ts';
import {
  chromiumPath,
  eventually,
  launchChromium,
  NO_CHROMIUM_MESSAGE,
  openPage,
  screenshot,
  signIn,
} from './browser.ts';

let stack: LocalStack;
let browser: Browser;
let page: Page;
let errors: string[];

const LAYERS = 40;
const WIDTH = 50;
const PAGE = 500;
const nodes = () => page.locator('svg.dag .node');

function largeSteps() {
  const steps = [];
  for (let l = 0; l < LAYERS; l++) {
    for (let i = 0; i < WIDTH; i++) {
      steps.push({
        id: `s${l}-${i}`,
        title: `Layer ${l} task ${i}`,
        target: T.echo,
        parentId: null,
        dependsOn: l === 0 ? [] : [`s${l - 1}-${i}`, `s${l - 1}-${(i + 1) % WIDTH}`],
        status: l === 0 && i < 2 ? 'failed' : 'succeeded',
        generation: 1,
        attempts: 1,
        output: null,
        error: null,
        confidence: null,
        startedAt: null,
        finishedAt: null,
        trace: [],
      });
    }
  }
  return steps;
}

describe.skipIf(!chromiumPath)('console with a 2,000-step plan in headless Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
    ({ page, errors } = await openPage(browser));
    await signIn(page, stack.url, stack.token);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('reads every page of steps and draws at most 100 folded bands that unfold on Enter', async () => {
    const runId = 'run-2000-steps';
    const steps = largeSteps();
    const served: string[] = [];
    await page.route(
      (url) => url.pathname === `/runs/${runId}`,
      async (route: Route) => {
        const cursor = new URL(route.request().url()).searchParams.get('cursor');
        served.push(cursor ?? 'first');
        const from = cursor === null ? 0 : Number(cursor.slice(1));
        const next = from + PAGE < steps.length ? { nextCursor: `p${from + PAGE}` } : {};
        const body = { runId, status: 'failed', objective: 'Migrate 2,000 services', revision: 1 };
        await route.fulfill({ json: { ...body, steps: steps.slice(from, from + PAGE), ...next } });
      },
    );

    const started = Date.now();
    await page.goto(`${stack.url}/console/#/runs/${runId}`);
    await eventually(() => nodes().count()).toBe(LAYERS);
    console.info(`console: 2,000-step run page drawn as ${LAYERS} bands in ${Date.now() - started} ms`);

    expect(served).toEqual(['first', 'p500', 'p1000', 'p1500']);
    // Two failed steps are not done: 1998 of 2000.
    expect(await page.locator('#run-progress').textContent()).toContain('1998/2000');
    expect(await page.locator('svg.dag .node.folded').count()).toBe(LAYERS);
    const first = page.locator('svg.dag .node[data-id="~/1"]');
    expect(await first.getAttribute('class')).toContain('status-failed');
    expect(await first.locator('.meta').textContent()).toBe('50 steps · ✓ 48 ✗ 2');
    expect(await page.locator('svg.dag .edge.bundle').count()).toBe(LAYERS - 1);
    await screenshot(page, 'large-1-overview');

    await page.locator('svg.dag .node[data-id="~/6"]').focus();
    await page.keyboard.press('Enter');
    await eventually(() => nodes().count()).toBe(LAYERS - 1 + WIDTH);
    expect(await page.locator('svg.dag .cluster-head[data-id="~/6"]').getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator('svg.dag .node[data-id="s5-0"]').count()).toBe(1);
    await screenshot(page, 'large-2-band-unfolded');
    await page.unroute((url) => url.pathname === `/runs/${runId}`);
    expect(errors).toEqual([]);
  });

  it('shows the rollbackHint of a mutating step in its details', async () => {
    const hint = 'Append a reversing entry for the entryId this step returned.';
    const runId = await stack.startRun({
      plan: plan('Record one entry', [step(stack, 'record', T.ledger, { input: { entry: 'x' }, rollbackHint: hint })]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}?step=record`);
    await eventually(() => page.locator('#rollback-hint').textContent()).toBe(hint);
    expect(errors).toEqual([]);
  });
});

if (!chromiumPath) {
  describe('console with a 2,000-step plan in headless Chromium', () => {
    it.skip(`SKIPPED: ${NO_CHROMIUM_MESSAGE}`, () => {});
  });
}
