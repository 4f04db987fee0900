import { launchBrowser, screenshot, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';

/** The browser-test set-up itself: Chromium starts, reaches the service through a loopback port, and a page is captured. */
describe('browser smoke', () => {
  let served: ServedApp;
  let browser: BrowserSession;

  beforeAll(async () => {
    served = await serveTestApp();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.t.close();
  });

  it('opens a page of the service and reads its answer and headers', async () => {
    const response = await browser.page.goto(`${served.baseUrl}/v1/healthz`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['x-request-id']).toMatch(/^req_/);
    await screenshot(browser.page, 'smoke-health');
  });
});
