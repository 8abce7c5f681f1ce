/**
 * Headless Chromium for the console's end-to-end tests: Debian's `chromium` (or CHROMIUM_PATH) driven by
 * playwright-core through `executablePath`; nothing is downloaded. Where no Chromium is installed the tests are
 * skipped with a loud warning naming the package to install, never silently passed.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** The Chromium to drive, or undefined when none is installed. CHROMIUM_PATH, when set, is the only one tried. */
export const chromiumPath: string | undefined = (
  process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : CANDIDATES
).find((path) => existsSync(path));

export const NO_CHROMIUM_MESSAGE =
  'NO CHROMIUM: the console end-to-end tests are SKIPPED. Install it with `apt-get install -y chromium` ' +
  '(or set CHROMIUM_PATH) to run them.';

if (!chromiumPath) console.warn(`\n⚠️  ${NO_CHROMIUM_MESSAGE}\n`);

/** Flags for a root user in a container: no sandbox, no GPU, no background traffic to anywhere. */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Launches headless Chromium; playwright gives every launch a fresh temporary --user-data-dir. */
export function launchChromium(): Promise<Browser> {
  if (!chromiumPath) throw new Error(NO_CHROMIUM_MESSAGE);
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: FLAGS, timeout: 60_000 });
}

export const SCREENSHOT_DIR = join('test-results', 'console');

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A fresh context (own sessionStorage) and page; page errors and console errors are collected for assertions. */
export async function openPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    // A 409 or 410 the page expects and reports still shows up as a failed resource load.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  return { context, page, errors };
}

/** Opens the console and signs in with the token through the sign-in form, as a person would. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
}

/** expect.poll with room for a loaded CI machine: the page polls the API every 1.5 s and lays out in a worker. */
export const eventually = <T>(read: () => T | Promise<T>, timeoutMs = 15_000) =>
  expect.poll(read, { timeout: timeoutMs, interval: 100 });
