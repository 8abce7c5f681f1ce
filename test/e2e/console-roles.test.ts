/**
 * The console with a tokens file, in a real browser: the header says who is signed in, the inbox of the person who
 * started a run does not offer its gate, and another approver's decision is recorded under their own name.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { type LocalStack, startTestStack, waitForRun } from '../support/local-stack.ts';
import { chromiumPath, eventually, launchChromium, NO_CHROMIUM_MESSAGE, openPage, signIn } from './browser.ts';
import { approvalOf, gatedPlan } from './console-fixtures.ts';

const ANA = { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator', 'approver'] };
const BO = { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['approver'] };

let stack: LocalStack;
let browser: Browser;

describe.skipIf(!chromiumPath)('console roles in headless Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cairn-console-roles-')), 'tokens.json');
    writeFileSync(file, JSON.stringify([ANA, BO]));
    [stack, browser] = await Promise.all([
      startTestStack({ settings: settingsFromEnv({ CAIRN_TOKENS_FILE: file }) }),
      launchChromium(),
    ]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("keeps a run's gate out of its starter's inbox and records the other approver's name", async () => {
    // The stack starts runs with the first token that may: ana's.
    const runId = await stack.startRun({ plan: gatedPlan(stack, 'Publish the price list') });

    const starter = await openPage(browser);
    await signIn(starter.page, stack.url, ANA.token);
    await eventually(() => starter.page.locator('#who').textContent()).toBe('ana · approver, operator');
    await starter.page.goto(`${stack.url}/console/#/approvals`);
    await eventually(() => starter.page.locator('main').textContent()).toContain('Nothing waits for a decision.');

    const approver = await openPage(browser);
    await signIn(approver.page, stack.url, BO.token);
    await eventually(() => approver.page.locator('#who').textContent()).toBe('bo · approver');
    await approver.page.goto(`${stack.url}/console/#/approvals`);
    const card = approver.page.locator('article.approval-card').first();
    await card.getByRole('button', { name: 'Approve' }).click();
    await eventually(() => card.locator('.result').textContent()).toMatch(/^Approved by bo/);

    expect((await waitForRun(stack, runId)).status).toBe('complete');
    const approvalId = await card.getAttribute('data-approval-id');
    expect(await approvalOf(stack, approvalId ?? '')).toMatchObject({ status: 'approved', decidedBy: 'bo' });
    expect([...starter.errors, ...approver.errors]).toEqual([]);
    await starter.context.close();
    await approver.context.close();
  });
});

if (!chromiumPath) {
  describe('console roles in headless Chromium', () => {
    it.skip(NO_CHROMIUM_MESSAGE, () => {});
  });
}
