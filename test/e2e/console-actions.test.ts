/**
 * The console's actions and new views in a real browser, on the local stack: starting a run from a plan (checked
 * first, issues named), cancelling with compensation, a replan the planner refuses (said in its words), rerunning a
 * failed step, a Markdown output rendered, the Events and Steps tabs, zoom and fit, and the runs search.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { getRun, type LocalStack, plan, startTestStack, step, waitForRun } from '../support/local-stack.ts';
import {
  chromiumPath,
  eventually,
  launchChromium,
  NO_CHROMIUM_MESSAGE,
  openPage,
  screenshot,
  signIn,
} from './browser.ts';
import { gatedPlan, pendingApproval } from './console-fixtures.ts';

let stack: LocalStack;
let browser: Browser;
let page: Page;
let errors: string[];

const REPORT =
  '# Quarterly report\n\n## Findings\n\n- Revenue **grew** 12%\n- Costs fell\n\nSee [the source](https://example.com/q3).';
const dialog = () => page.locator('dialog[open]');

describe.skipIf(!chromiumPath)('console actions in headless Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
    ({ page, errors } = await openPage(browser));
    await signIn(page, stack.url, stack.token);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('starts a run from a plan, naming the fields of an invalid one before anything is sent', async () => {
    await page.goto(`${stack.url}/console/#/new`);
    await page.getByLabel('a plan (JSON)').check();
    const bad = plan('Say hello', [step(stack, 'hello', T.echo, { input: { value: 1, extra: true } })]);
    await page.getByLabel('Plan (JSON)', { exact: true }).fill(JSON.stringify(bad));
    await page.getByRole('button', { name: 'Validate the plan' }).click();
    await eventually(() => page.locator('#plan-issues').textContent()).toContain(
      "must NOT have additional properties: 'extra'",
    );

    const good = plan('Say hello from the console', [step(stack, 'hello', T.echo, { input: { value: 1 } })]);
    await page.getByLabel('Plan (JSON)', { exact: true }).fill(JSON.stringify(good));
    await page.getByRole('button', { name: 'Start the run…' }).click();
    await dialog().getByRole('button', { name: 'Start' }).click();
    await eventually(() => page.locator('h1.objective').textContent()).toBe('Say hello from the console');
    const runId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    await eventually(() => page.locator('#run-progress').textContent()).toContain('1/1');
    expect(errors).toEqual([]);
  });

  it('cancels a run with compensation after a confirm, and the page follows it to cancelled', async () => {
    const runId = await stack.startRun({ plan: gatedPlan(stack, 'Close the books') });
    await pendingApproval(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}`);
    await page.getByRole('button', { name: 'Cancel…' }).click();
    await dialog()
      .getByLabel(/Undo the finished mutating steps/)
      .check();
    await screenshot(page, 'actions-1-cancel-dialog');
    await dialog().getByRole('button', { name: 'Cancel the run' }).click();
    await eventually(() => page.locator('#run-notice').textContent()).toContain('Cancel sent');
    expect((await waitForRun(stack, runId)).status).toBe('cancelled');
    await eventually(() => page.locator('.run-meta .badge').first().textContent(), 20_000).toContain('cancelled');
    expect(await page.locator('#cancel-run').count()).toBe(0);
  });

  it("says in the planner's words when a replan is refused", async () => {
    const runId = await stack.startRun({
      plan: plan('Fetch and fail', [step(stack, 'boom', T.fail, { input: { message: 'no', retryable: false } })]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}`);
    await page.getByRole('button', { name: 'Replan…' }).click();
    await dialog().getByRole('button', { name: 'Replan' }).click();
    await eventually(() => dialog().locator('.dialog-message').textContent()).toBe('Say why the plan must change.');
    await dialog().getByLabel('Reason').fill('the boom step cannot work');
    await dialog().getByRole('button', { name: 'Replan' }).click();
    await eventually(() => dialog().locator('.dialog-message').textContent(), 20_000).toMatch(
      /^The replan failed \(E_[A-Z_]+\): .+/,
    );
    await screenshot(page, 'actions-2-replan-refused');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
  });

  it('raises the budget of a run paused for it from its page, and the run goes on to complete', async () => {
    const runId = await stack.startRun({
      plan: {
        ...plan('Spend, then say so', [
          step(stack, 'spend', T.spend, { input: { tokens: 0, costUsd: 2 } }),
          step(stack, 'say', T.echo, { dependsOn: ['spend'], input: { value: 'done' } }),
        ]),
        budget: { maxCostUsd: 1, onExhausted: 'pause' },
      },
    });
    await waitForRun(stack, runId, (run) => run.terminal !== undefined);
    await page.goto(`${stack.url}/console/#/runs/${runId}`);
    await page.getByRole('button', { name: 'Raise limits…' }).click();
    await dialog().getByLabel('Dollars').fill('1.5');
    await dialog().getByRole('button', { name: 'Raise and resume' }).click();
    await eventually(() => dialog().locator('.dialog-message').textContent()).toContain('E_STILL_OVER_LIMIT');
    await dialog().getByLabel('Dollars').fill('5');
    await screenshot(page, 'actions-2b-raise-budget');
    await dialog().getByRole('button', { name: 'Raise and resume' }).click();
    await eventually(() => page.locator('#run-notice').textContent()).toContain('Limits raised');
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    await eventually(() => page.locator('#raise-budget').count(), 20_000).toBe(0);
  });

  it('reruns a failed step from its panel: a new generation, the run reopened', async () => {
    const key = `rerun-${Date.now()}`;
    const runId = await stack.startRun({
      plan: plan('Fetch once it works', [
        step(stack, 'fetch', T.flaky, { input: { key, failures: 1 }, maxRetries: 0 }),
      ]),
    });
    expect((await waitForRun(stack, runId)).status).toBe('failed');
    await page.goto(`${stack.url}/console/#/runs/${runId}?step=fetch`);
    await page.getByRole('button', { name: 'Rerun from here…' }).click();
    await dialog().getByLabel('Reason (optional)').fill('the provider is back');
    await dialog().getByRole('button', { name: 'Rerun from here' }).click();
    await eventually(() => page.locator('#panel-notice').textContent()).toBe('Rerunning 1 step; the run reopened.');
    await eventually(async () => (await getRun(stack, runId)).status, 20_000).toBe('complete');
    expect((await getRun(stack, runId)).steps[0]?.generation).toBe(2);
    await eventually(() => page.locator('svg.dag .node[data-id="fetch"]').getAttribute('class'), 20_000).toContain(
      'status-succeeded',
    );
  });

  it('renders a Markdown output as headings, lists and links, with the raw text a click away', async () => {
    const runId = await stack.startRun({
      plan: plan('Write the report', [step(stack, 'report', T.echo, { input: { value: REPORT } })]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}?step=report`);
    const output = page.locator('#step-output');
    await eventually(() => output.locator('.markdown h1').textContent()).toBe('Quarterly report');
    expect(await output.locator('.markdown li').allTextContents()).toEqual(['Revenue grew 12%', 'Costs fell']);
    expect(await output.locator('.markdown strong').textContent()).toBe('grew');
    expect(await output.locator('.markdown a').getAttribute('href')).toBe('https://example.com/q3');
    await screenshot(page, 'actions-3-markdown');
    await output.getByRole('button', { name: 'Raw' }).click();
    expect(await output.locator('.md-raw').textContent()).toBe(REPORT);
    expect(await output.locator('.markdown').isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });

  it('lists the run events and filters them by type and by step', async () => {
    const runId = await stack.startRun({
      plan: plan('Two steps', [
        step(stack, 'one', T.echo, { input: { value: 1 } }),
        step(stack, 'two', T.echo, { input: { value: 2 }, dependsOn: ['one'] }),
      ]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}/events`);
    await eventually(() => page.locator('#event-list .event[data-type="StepSucceeded"]').count()).toBe(2);
    await page.locator('#event-type').selectOption('StepSucceeded');
    await page.locator('#event-step').fill('two');
    await eventually(() => page.locator('#event-list .event').count()).toBe(1);
    expect(await page.locator('#event-list .event').getAttribute('data-step-id')).toBe('two');
    expect(await page.title()).toBe('Events · Two steps · cairn');
  });

  it('sorts the step table by a column, both ways', async () => {
    const runId = await stack.startRun({
      plan: plan('Three speeds', [
        step(stack, 'slow', T.sleep, { input: { ms: 300 } }),
        step(stack, 'quick', T.echo, { input: { value: 1 } }),
        step(stack, 'middle', T.sleep, { input: { ms: 120 } }),
      ]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}/steps`);
    const order = () =>
      page.locator('#step-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-step-id')));
    await eventually(order).toEqual(['slow', 'quick', 'middle']);
    await page.getByRole('button', { name: 'Duration' }).click();
    await eventually(order).toEqual(['slow', 'middle', 'quick']);
    await page.getByRole('button', { name: 'Duration' }).click();
    await eventually(order).toEqual(['quick', 'middle', 'slow']);
    expect(await page.locator('th[data-col="duration"]').getAttribute('aria-sort')).toBe('ascending');
  });

  it('zooms with the buttons, keys and wheel, fits, and shows a minimap', async () => {
    const runId = await stack.startRun({ plan: gatedPlan(stack, 'Zoom around') });
    await pendingApproval(stack, runId);
    await page.goto(`${stack.url}/console/#/runs/${runId}`);
    const canvas = page.locator('#dag');
    await page.locator('svg.dag .node').first().waitFor();
    const scale = async () => Number(await canvas.getAttribute('data-scale'));
    const fitted = await scale();
    await page.getByRole('button', { name: 'Zoom in' }).click();
    expect(await scale()).toBeCloseTo(Math.min(2.5, fitted * 1.25), 2);
    await canvas.focus();
    await page.keyboard.press('-');
    await page.keyboard.press('-');
    expect(await scale()).toBeLessThan(fitted);
    await canvas.hover();
    await page.mouse.wheel(0, -200);
    await eventually(scale).toBeGreaterThan(fitted * 1.25 ** -2 * 1.01);
    await page.getByRole('button', { name: 'Fit' }).click();
    expect(await scale()).toBeCloseTo(fitted, 2);
    expect(await page.locator('.minimap rect[data-id]').count()).toBe(3);
    await page.getByRole('button', { name: 'Next waiting' }).click();
    await eventually(() => page.locator('#panel-title').textContent()).toBe('Editor signs off');
  });

  it('searches the runs by objective and by run id', async () => {
    const runId = await stack.startRun({
      plan: plan('Rotate the payroll keys', [step(stack, 'k', T.echo, { input: { value: 1 } })]),
    });
    await waitForRun(stack, runId);
    await page.goto(`${stack.url}/console/#/runs`);
    await page.getByLabel('Search runs by objective or run id').fill('PAYROLL');
    await page.getByRole('button', { name: 'Search' }).click();
    await eventually(() => page.locator('#runs-body tr').count()).toBe(1);
    expect(await page.locator('#runs-body tr').getAttribute('data-run-id')).toBe(runId);
    expect(page.url()).toContain('q=PAYROLL');
    await page.getByLabel('Search runs by objective or run id').fill(runId.slice(0, 13));
    await page.getByRole('button', { name: 'Search' }).click();
    await eventually(() =>
      page.locator('#runs-body tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id'))),
    ).toEqual([runId]);
    expect(errors).toEqual([]);
  });
});

if (!chromiumPath) {
  describe('console actions in headless Chromium', () => {
    it.skip(`SKIPPED: ${NO_CHROMIUM_MESSAGE}`, () => {});
  });
}
