/**
 * The approvals workflow in a real browser: a plan with a human gate runs on the local stack, the console shows its
 * DAG paused at the gate, and a person approves, rejects or edits the output in the inbox. Lost races (409) and
 * expired approvals (410) are shown plainly. Screenshots land in test-results/console/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRun, type LocalStack, startTestStack, waitForRun } from '../support/local-stack.ts';
import {
  chromiumPath,
  eventually,
  launchChromium,
  NO_CHROMIUM_MESSAGE,
  openPage,
  screenshot,
  signIn,
} from './browser.ts';
import { approvalOf, gatedPlan, pendingApproval } from './console-fixtures.ts';

let stack: LocalStack;
let browser: Browser;

const nodeClass = (page: Page, id: string) => page.locator(`svg.dag .node[data-id="${id}"]`).getAttribute('class');
const card = (page: Page, approvalId: string) => page.locator(`article[data-approval-id="${approvalId}"]`);

async function gatedRun(objective: string, timeoutSeconds?: number) {
  const runId = await stack.startRun({ plan: gatedPlan(stack, objective, timeoutSeconds) });
  return { runId, approval: await pendingApproval(stack, runId) };
}

describe.skipIf(!chromiumPath)('console approvals in headless Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows the DAG paused at the gate, approves in the inbox and shows the run complete', async () => {
    const { runId, approval } = await gatedRun('Publish the release notes');
    const { page, errors, context } = await openPage(browser);
    await signIn(page, stack.url, stack.token);

    await page.locator(`tr[data-run-id="${runId}"]`).getByRole('link', { name: 'Publish the release notes' }).click();
    await eventually(() => nodeClass(page, 'gate')).toContain('status-awaiting_approval');
    expect(await page.locator('svg.dag .node').count()).toBe(3);
    expect(await page.locator('svg.dag .edge').count()).toBe(2);
    expect(await nodeClass(page, 'prepare')).toContain('status-succeeded');
    await eventually(() => page.locator('.run-meta .badge').textContent()).toContain('paused');
    await screenshot(page, 'approve-1-run-paused-at-gate');

    await page.locator('[data-nav="approvals"]').click();
    const inbox = card(page, approval.approvalId);
    await expect
      .poll(() => inbox.getByRole('heading', { level: 2 }).textContent())
      .toBe('May "Publish the release notes" go out?');
    expect(await inbox.locator('.io').textContent()).toContain('Check the numbers in section 2');
    expect(await inbox.locator('.io').textContent()).toContain('draft v1');
    await screenshot(page, 'approve-2-inbox');
    await inbox.getByRole('button', { name: 'Approve' }).click();
    await eventually(() => inbox.locator('.result').textContent()).toMatch(/^Approved by local-token/);
    await screenshot(page, 'approve-3-decided');

    await inbox.getByRole('link', { name: 'Publish the release notes' }).click();
    await eventually(() => page.locator('.run-meta .badge').textContent(), 20_000).toContain('complete');
    await eventually(() => nodeClass(page, 'ship')).toContain('status-succeeded');
    expect(await nodeClass(page, 'gate')).toContain('status-succeeded');
    await screenshot(page, 'approve-4-run-complete');

    expect((await getRun(stack, runId)).status).toBe('complete');
    expect(await approvalOf(stack, approval.approvalId)).toMatchObject({ status: 'approved' });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('rejects with a comment; an open run page follows live to failed without moving any node', async () => {
    const { runId, approval } = await gatedRun('Send the invoice run');
    const watcher = await openPage(browser);
    await signIn(watcher.page, stack.url, stack.token);
    await watcher.page.goto(`${stack.url}/console/#/runs/${runId}`);
    await eventually(() => nodeClass(watcher.page, 'gate')).toContain('status-awaiting_approval');
    const before = await watcher.page.locator('svg.dag .node[data-id="gate"]').boundingBox();

    const approver = await openPage(browser);
    await signIn(approver.page, stack.url, stack.token);
    await approver.page.goto(`${stack.url}/console/#/approvals`);
    const inbox = card(approver.page, approval.approvalId);
    await inbox.getByLabel('Comment (optional)').fill('The totals do not add up');
    await inbox.getByRole('button', { name: 'Reject' }).click();
    await eventually(() => inbox.locator('.result').textContent()).toMatch(/^Rejected by local-token/);

    await eventually(() => nodeClass(watcher.page, 'gate'), 20_000).toContain('status-failed');
    await eventually(() => nodeClass(watcher.page, 'ship')).toContain('status-blocked');
    await eventually(() => watcher.page.locator('.run-meta .badge').textContent()).toContain('failed');
    expect(await watcher.page.locator('svg.dag .node[data-id="gate"]').boundingBox()).toEqual(before);

    await watcher.page.locator('svg.dag .node[data-id="gate"]').focus();
    await watcher.page.keyboard.press('Enter');
    const panel = watcher.page.locator('#step-panel');
    await eventually(() => panel.textContent()).toContain('E_REJECTED');
    expect(await panel.textContent()).toContain('The totals do not add up');
    await screenshot(watcher.page, 'reject-1-run-failed-with-details');

    expect(await approvalOf(stack, approval.approvalId)).toMatchObject({
      status: 'rejected',
      comment: 'The totals do not add up',
    });
    expect((await waitForRun(stack, runId)).status).toBe('failed');
    expect([...watcher.errors, ...approver.errors]).toEqual([]);
    await watcher.context.close();
    await approver.context.close();
  });

  it('refuses an edited output that breaks the outputSchema in the page, then sends a valid one', async () => {
    const { runId, approval } = await gatedRun('Archive the old tickets');
    const { page, errors, context } = await openPage(browser);
    await signIn(page, stack.url, stack.token);
    await page.goto(`${stack.url}/console/#/approvals`);
    const inbox = card(page, approval.approvalId);
    await inbox.getByRole('button', { name: 'Edit output…' }).click();
    const editor = inbox.getByLabel('Corrected output (JSON)');

    await editor.fill('{"approved": ');
    await inbox.getByRole('button', { name: 'Send edited output' }).click();
    await eventually(() => inbox.locator('.check-errors').textContent()).toContain('Not valid JSON');

    await editor.fill('{"approved": "yes", "reviewer": "ana"}');
    await inbox.getByRole('button', { name: 'Send edited output' }).click();
    await eventually(() => inbox.locator('.check-errors').textContent()).toContain('nothing was sent');
    const shown = await inbox.locator('.check-errors').textContent();
    expect(shown).toContain('/approved must be boolean');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'edit-1-invalid-output-refused');
    expect(await approvalOf(stack, approval.approvalId)).toMatchObject({ status: 'pending' });

    await editor.fill('{"approved": true, "comment": "only tickets older than a year"}');
    await inbox.getByRole('button', { name: 'Send edited output' }).click();
    await eventually(() => inbox.locator('.result').textContent()).toMatch(/^Edited and approved by local-token/);
    await screenshot(page, 'edit-2-valid-output-sent');

    const done = await waitForRun(stack, runId);
    expect(done.status).toBe('complete');
    expect(done.steps.find((s) => s.id === 'gate')?.output).toEqual({
      approved: true,
      comment: 'only tickets older than a year',
    });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('says plainly when someone else decided first (409)', async () => {
    const { approval } = await gatedRun('Rotate the signing keys');
    const { page, context } = await openPage(browser);
    await signIn(page, stack.url, stack.token);
    // The page keeps showing what it loaded, as if the other decision happened between two refreshes.
    const stale = (await stack.request('GET', '/approvals?status=pending')).json;
    await page.route(
      (url) => url.pathname === '/approvals' && url.search === '?status=pending',
      (route) => route.fulfill({ json: stale }),
    );
    await page.goto(`${stack.url}/console/#/approvals`);
    const inbox = card(page, approval.approvalId);
    await inbox.getByRole('button', { name: 'Approve' }).waitFor();

    const other = await stack.request('POST', `/approvals/${approval.approvalId}`, {
      decision: 'reject',
      comment: 'no',
    });
    await inbox.getByRole('button', { name: 'Approve' }).click();

    expect(other.status).toBe(200);
    await eventually(() => inbox.locator('.result').textContent()).toContain('Already decided');
    expect(await inbox.locator('.result').getAttribute('role')).toBe('alert');
    expect(await inbox.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
    await screenshot(page, 'conflict-409-already-decided');
    expect(await approvalOf(stack, approval.approvalId)).toMatchObject({ status: 'rejected' });
    await context.close();
  });

  it('says plainly when the approval expired (410)', async () => {
    const { runId, approval } = await gatedRun('Renew the certificate', 1);
    const stale = { approvals: [approval] };
    await waitForRun(stack, runId);
    const { page, context } = await openPage(browser);
    await signIn(page, stack.url, stack.token);
    await page.route(
      (url) => url.pathname === '/approvals' && url.search === '?status=pending',
      (route) => route.fulfill({ json: stale }),
    );
    await page.goto(`${stack.url}/console/#/approvals`);
    const inbox = card(page, approval.approvalId);

    await inbox.getByRole('button', { name: 'Approve' }).click();

    await eventually(() => inbox.locator('.result').textContent()).toMatch(/^Expired: /);
    await screenshot(page, 'expired-410');
    expect((await approvalOf(stack, approval.approvalId)).status).toBe('expired');
    await context.close();
  });
});

if (!chromiumPath) {
  describe('console approvals in headless Chromium', () => {
    it.skip(`SKIPPED: ${NO_CHROMIUM_MESSAGE}`, () => {});
  });
}
