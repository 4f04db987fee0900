import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser, screenshot, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';

/**
 * The browser-test set-up itself: Chromium starts, reaches the service on a loopback port,
 * opens /console (a tiny stand-in build here) under its Content-Security-Policy, and a page
 * is captured.
 */
describe('browser smoke', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-smoke-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><html lang="en"><head><title>Console</title><link rel="stylesheet" href="/console/assets/app-1.css"><script type="module" src="/console/assets/app-1.js"></script></head><body><main id="root"></main></body></html>',
    );
    writeFileSync(join(dir, 'assets', 'app-1.js'), 'document.getElementById("root").textContent = "console script ran";');
    writeFileSync(join(dir, 'assets', 'app-1.css'), 'main { font-family: sans-serif; }');
    served = await serveTestApp({ CONSOLE_DIR: dir });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens /console: its same-origin script runs under the console headers', async () => {
    const violations: string[] = [];
    browser.page.on('console', (message) => {
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) violations.push(message.text());
    });
    const response = await browser.page.goto(`${served.baseUrl}/console/`);
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['cache-control']).toBe('no-store');
    // A string: the test files compile without the DOM's types.
    await browser.page.waitForFunction('document.getElementById("root")?.textContent === "console script ran"');
    expect(violations).toEqual([]);
    await screenshot(browser.page, 'smoke-console');
  });
});
