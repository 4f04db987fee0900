import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** Debian's Chromium (playwright-core never downloads a browser); CHROMIUM_PATH names another. */
export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/** Flags for a quiet, reproducible headless run in a container: no GPU, no sandbox, nothing fetched in the background. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Chromium with a fresh user-data directory (no cookies or storage from an earlier run), one page open. */
export async function launchBrowser(): Promise<BrowserSession> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    throw new Error(`Chromium not found at ${executablePath}: run apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  const userDataDir = await mkdtemp(join(tmpdir(), 'browser-test-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

export const SCREENSHOT_DIR = join(__dirname, '..', 'screenshots');

/** A full-page PNG under test/browser/screenshots/ (gitignored), for looking at a failure or a page afterwards. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

export interface ServedApp {
  t: TestApp;
  /** `http://127.0.0.1:<port>`: the service listening on a loopback port the browser reaches. */
  baseUrl: string;
}

/** The real service (test harness, test database) listening on a loopback port. */
export async function serveTestApp(env: Record<string, string | undefined> = {}): Promise<ServedApp> {
  const t = await createTestApp(env);
  await t.app.listen(0, '127.0.0.1');
  const address = t.app.getHttpServer().address();
  if (!address || typeof address === 'string') throw new Error('the test app is not listening on a TCP port');
  return { t, baseUrl: `http://127.0.0.1:${address.port}` };
}
