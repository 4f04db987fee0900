// The browser pass of bench/operator-reads.mjs: the console's customer search and customer
// page rendered in headless Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) against
// the benched service. Each load starts from a blank page, so index.html, the session check
// and the page's API calls are all in the figure; the time runs from the navigation to the
// page's data being visible (the search's result link; the customer's email and timeline).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export function chromiumPath() {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/**
 * Signs in on the console's sign-in page (its session cookie), then `loads` times each:
 * the customer search for `searchFor(i)` until the link to `customerOf(i)` shows, and the
 * customer page until `emailOf(i)` and the first timeline entry show.
 * Returns null when Chromium is missing.
 */
export async function consoleBrowserPass({ base, projectId, token, loads, pick, searchFor, customerOf, emailOf }) {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) return null;
  const { chromium } = await import('playwright-core');
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'bench-console-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: FLAGS, viewport: { width: 1280, height: 800 } });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${base}/console/`);
    await page.getByLabel('Operator token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor({ timeout: 30_000 });
    const pages = `${base}/console/#/p/${projectId}`;
    const visible = (locator) => locator.first().waitFor({ state: 'visible', timeout: 30_000 });

    const search = async (i) => {
      await page.goto('about:blank');
      const started = performance.now();
      await page.goto(`${pages}/customers`);
      await page.getByLabel('Find a customer').fill(searchFor(i));
      await page.getByRole('button', { name: 'Search' }).click();
      await visible(page.locator(`a[href$="/customers/${customerOf(i)}"]`));
      return performance.now() - started;
    };
    const customer = async (i) => {
      await page.goto('about:blank');
      const started = performance.now();
      await page.goto(`${pages}/customers/${customerOf(i)}`);
      await visible(page.getByText(emailOf(i)));
      await visible(page.locator('ol.timeline li'));
      return performance.now() - started;
    };
    // Warm-up: the browser's cache of the fingerprinted assets, the service's connections and plans.
    for (let n = 0; n < 3; n++) {
      await search(pick());
      await customer(pick());
    }
    const timings = { search: [], customer: [] };
    for (let n = 0; n < loads; n++) {
      timings.search.push(await search(pick()));
      timings.customer.push(await customer(pick()));
    }
    return timings;
  } finally {
    await context.close();
    await rm(userDataDir, { recursive: true, force: true });
  }
}
