import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { keyHeaders } from '../support/fixtures.js';
import { TEST_OPERATOR_TOKEN } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { launchBrowser, type BrowserSession } from './support/browser.js';
import { buildConsole, checkPage, settled } from './support/console.js';

const DOCS = join(__dirname, '..', '..', 'docs');

/** The README's pictures of the overview: written when missing or with UPDATE_CONSOLE_PNG=1, so runs leave the tree clean. */
function publish(shot: string, name: string): void {
  const target = join(DOCS, name);
  if (!existsSync(target) || process.env.UPDATE_CONSOLE_PNG === '1') copyFileSync(shot, target);
}

/**
 * The console's overview as charts, in Chromium against the real service and database: revenue
 * today, this month and last month; charts with axes in their units, a tooltip on hover and a
 * table with a caption; the range presets, dates, granularity and split changing the data; null
 * periods drawn as gaps and listed as "not measured" while measured zeros are $0.00; each chart
 * read by keyboard (arrows, Home and End show the hover's tooltip and announce the values); at
 * most 3 API calls; axe with no violation in both environments, in dark colours and 390 px wide.
 */
describe('operator console: the overview as charts', () => {
  const h = cardWebhookHarness();
  const { now, event, send } = h;
  const DAY = 86_400;
  let baseUrl = '';
  let browser: BrowserSession;

  const page = () => browser.page;
  const day = (offsetDays = 0) => new Date((now() + offsetDays * DAY) * 1000).toISOString().slice(0, 10);
  /** The 10th of last month (UTC), noon, in Unix seconds: a payment there makes the days before it "not measured". */
  const lastMonthAt = () => {
    const d = new Date(now() * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 10, 12) / 1000;
  };
  const lastMonthDay = () => new Date(lastMonthAt() * 1000).toISOString().slice(0, 10);
  const card = (chart: string): Locator => page().locator(`section[data-chart="${chart}"]`);
  const tableOf = async (chart: string): Promise<Locator> => {
    const section = card(chart);
    const details = section.locator('details');
    if (!(await details.evaluate((node) => (node as unknown as { open: boolean }).open))) await section.locator('summary').click();
    return section.getByRole('table');
  };
  const rowOf = async (chart: string, period: string): Promise<string[]> =>
    (await tableOf(chart)).getByRole('row', { name: period }).locator('th, td').allInnerTexts();
  const openOverview = async () => {
    await page().goto(`${baseUrl}/console/#/p/${h.fx.projectId}/overview`);
    await settled(page());
    await card('mrr').getByRole('application').waitFor();
  };
  const switchTo = async (env: 'sandbox' | 'production') => {
    await page().getByRole('radio', { name: env }).check();
    await page().getByRole('radio', { name: env, checked: true }).waitFor();
  };
  /** Waits for the charts call with these query parameters. */
  const chartsCall = (params: Record<string, string>) =>
    page().waitForResponse((response) => {
      const url = new URL(response.url());
      return url.pathname.endsWith('/charts') && Object.entries(params).every(([name, value]) => url.searchParams.get(name) === value);
    });

  beforeAll(async () => {
    buildConsole();
    await h.t.app.listen(0, '127.0.0.1');
    const address = h.t.app.getHttpServer().address();
    if (!address || typeof address === 'string') throw new Error('the test app is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;

    const sub = {
      id: uid('sub'),
      object: 'subscription',
      customer: uid('cus'),
      status: 'active',
      cancel_at_period_end: false,
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: uid('si'),
            object: 'subscription_item',
            current_period_end: now() + 30 * DAY,
            quantity: 1,
            price: { id: uid('price'), product: 'prod_pro', unit_amount: 2000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
          },
        ],
      },
    };
    expect((await send(event('customer.subscription.created', sub))).body.decision).toBe('applied');
    for (const [amount, paidAt] of [
      [2000, now()],
      [3000, lastMonthAt()],
    ])
      expect(
        (
          await send(
            event('invoice.paid', {
              id: uid('in'),
              object: 'invoice',
              customer: sub.customer,
              amount_paid: amount,
              currency: 'usd',
              subscription: sub.id,
              status_transitions: { paid_at: paidAt },
            }),
          )
        ).status,
      ).toBe(200);

    const at = h.t.clock.nowMs();
    const events = [
      ...['app.opened', 'app.opened', 'paywall.viewed'].map((name) => ({ name, eventId: `ev_${randomUUID()}`, timestamp: at, anonymousId: 'anon_overview' })),
      {
        name: 'error.unhandled',
        eventId: `err_${randomUUID()}`,
        timestamp: at,
        level: 'error',
        anonymousId: 'anon_overview',
        properties: { fingerprint: 'feedc0de', message: 'boom', errorType: 'TypeError' },
      },
    ];
    expect((await h.t.http.post('/v1/events').set(keyHeaders(h.fx, h.fx.keys.skTest)).send({ events })).status).toBe(202);

    browser = await launchBrowser();
    await page().goto(`${baseUrl}/console/`);
    await page().getByLabel('Operator token').fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await switchTo('sandbox');
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('loads with at most 3 API calls; revenue today, this month and last month at the top', async () => {
    const calls: string[] = [];
    const record = (request: { url(): string }) => {
      if (new URL(request.url()).pathname.startsWith('/admin/v1/')) calls.push(new URL(request.url()).pathname);
    };
    page().on('request', record);
    try {
      await openOverview();
      // A fresh load: the project's name (titles) is read too.
      await page().reload();
      calls.length = 0;
      await settled(page());
      await card('mrr').getByRole('application').waitFor();
    } finally {
      page().off('request', record);
    }
    expect(calls.length).toBeLessThanOrEqual(3);
    expect(calls.filter((path) => path.endsWith('/charts'))).toHaveLength(1);

    const figures = page().getByRole('definition');
    await figures.filter({ hasText: '$20.00' }).first().waitFor();
    const figure = (label: string) =>
      page().locator('.figure', {
        has: page()
          .getByRole('term')
          .filter({ hasText: new RegExp(`^${label}$`) }),
      });
    expect(await figure('Revenue today').innerText()).toMatch(/\$20\.00[\s\S]*Refunds \$0\.00 · Net \$20\.00/);
    expect(await figure('Revenue this month').innerText()).toMatch(/\$20\.00[\s\S]*Refunds \$0\.00 · Net \$20\.00/);
    expect(await figure('Revenue last month').innerText()).toMatch(/\$30\.00/);
    expect(await figure('MRR').innerText()).toMatch(/\$20\.00/);
  });

  it('axes carry their units; hovering shows the period’s values; each chart has a captioned table', async () => {
    await openOverview();
    const mrr = card('mrr');
    const labels = (chart: string) => card(chart).locator('text.recharts-label').allTextContents();
    const ticks = (chart: string) => card(chart).locator('.recharts-cartesian-axis-tick-value').allTextContents();
    expect(await labels('mrr')).toEqual(['USD']);
    expect(await ticks('mrr')).toEqual(expect.arrayContaining(['$0', '$20']));
    expect(await labels('revenue')).toEqual(['USD']);
    expect(await labels('churn')).toEqual(['%']);
    expect(await labels('events')).toEqual(['count']);
    expect((await labels('new_customers')).sort()).toEqual(['%', 'count']);
    expect(await ticks('new_customers')).toEqual(expect.arrayContaining(['0', '1', '0%', '100%']));
    // A chart with nothing measured in the range says so instead of drawing zeros.
    await card('churn').getByText('Not measured in this range').waitFor();

    // The last period (today) sits at the right end of the plot.
    await mrr.scrollIntoViewIfNeeded();
    const grid = (await mrr.locator('.recharts-cartesian-grid').boundingBox())!;
    await page().mouse.move(grid.x + grid.width / 2, grid.y + grid.height / 2);
    await page().mouse.move(grid.x + grid.width - 3, grid.y + grid.height / 2, { steps: 5 });
    const tooltip = mrr.locator('.chart-tooltip');
    await tooltip.waitFor();
    expect(await tooltip.innerText()).toContain(day());
    expect(await tooltip.innerText()).toMatch(/MRR: \$20\.00/);
    expect(await tooltip.innerText()).toMatch(/New: \$20\.00/);

    for (const chart of ['mrr', 'revenue', 'active_subscriptions', 'trials', 'churn', 'refunds', 'new_customers', 'events']) {
      const table = await tableOf(chart);
      expect(await table.locator('caption').innerText()).toMatch(/ per day, /);
      expect(await table.locator('tbody tr').count()).toBe(30);
    }
    expect(await (await tableOf('mrr')).locator('caption').innerText()).toMatch(/^MRR and its movement per day, .* \(USD\)$/);
    expect(await rowOf('mrr', day())).toEqual([day(), '$20.00', '$0.00', '$0.00', '$0.00', '$0.00', '$20.00']);
    expect(await rowOf('events', day())).toEqual([day(), '4', '1', '0']);
  });

  // Ends with axe over the whole page, the keyboard's tooltip shown: longer than one test's default time on a loaded machine.
  it('a keyboard reads each chart: one tab stop, arrows, Home and End show the period’s values and announce them', async () => {
    await openOverview();
    const revenue = card('revenue');
    const plot = revenue.getByRole('application', { name: /^Revenue, / });
    expect(await plot.getAttribute('aria-roledescription')).toBe('chart');
    expect(await plot.getAttribute('tabindex')).toBe('0');
    const live = revenue.locator('[role="status"][aria-live="polite"]');
    const tooltip = revenue.locator('.chart-key-tooltip .chart-tooltip');
    const keyTooltipAt = (period: string) => revenue.locator('.chart-key-tooltip', { hasText: period }).waitFor();

    // The plot is a tab stop (Shift+Tab from its table's summary reaches it); focus shows the latest period (today).
    await revenue.locator('summary').focus();
    await page().keyboard.press('Shift+Tab');
    expect(await page().evaluate(() => (globalThis as any).document.activeElement?.closest('section')?.dataset.chart)).toBe('revenue');
    await keyTooltipAt(day());
    expect(await tooltip.innerText()).toMatch(/Gross: \$20\.00/);
    expect(await live.innerText()).toBe(`${day()}: Gross $20.00, Refunds $0.00, Net $20.00`);

    // Left steps back a day; Right at the last day stays there.
    await page().keyboard.press('ArrowLeft');
    await keyTooltipAt(day(-1));
    expect(await live.innerText()).toMatch(new RegExp(`^${day(-1)}: Gross `));
    await page().keyboard.press('ArrowRight');
    await page().keyboard.press('ArrowRight');
    await keyTooltipAt(day());
    expect(await tooltip.innerText()).toMatch(/Net: \$20\.00/);

    // Home: the range's first day; End: today.
    await page().keyboard.press('Home');
    await keyTooltipAt(day(-29));
    expect(await live.innerText()).toMatch(new RegExp(`^${day(-29)}: Gross `));
    await page().keyboard.press('End');
    await keyTooltipAt(day());
    expect(await live.innerText()).toBe(`${day()}: Gross $20.00, Refunds $0.00, Net $20.00`);
    // The tooltip stays inside the plot; the hover's is not shown beside it.
    const box = (await plot.boundingBox())!;
    const shown = (await tooltip.boundingBox())!;
    expect(shown.x).toBeGreaterThanOrEqual(box.x);
    expect(shown.x + shown.width).toBeLessThanOrEqual(box.x + box.width + 1);
    expect(await revenue.locator('.chart-tooltip').count()).toBe(1);

    // Escape hides it, a key shows it again; leaving the chart hides it.
    await page().keyboard.press('Escape');
    await tooltip.waitFor({ state: 'detached' });
    await page().keyboard.press('ArrowLeft');
    await keyTooltipAt(day(-1));
    await page().keyboard.press('Tab');
    await tooltip.waitFor({ state: 'detached' });

    // Another chart, another unit: the MRR line at today.
    await card('mrr').getByRole('application').focus();
    await card('mrr').locator('.chart-key-tooltip', { hasText: day() }).waitFor();
    expect(await card('mrr').locator('.chart-key-tooltip').innerText()).toMatch(/MRR: \$20\.00/);
    await checkPage(page(), 'overview-charts-keyboard');
  }, 90_000);

  it('zero is not "not measured": null periods are gaps and "—" in the table, measured zeros $0.00', async () => {
    await openOverview();
    const longer = chartsCall({ from: day(-89), to: day() });
    await page().getByRole('button', { name: '90 days' }).click();
    await longer;
    expect(await page().getByRole('button', { name: '90 days' }).getAttribute('aria-pressed')).toBe('true');
    // Before the first payment: not measured; on it: $30.00; the day after: a measured $0.00.
    const before = await rowOf('revenue', day(-89));
    expect(before[1]).toMatch(/^—\s*not measured$/);
    expect(await rowOf('revenue', lastMonthDay())).toEqual(expect.arrayContaining(['$30.00']));
    const after = new Date(lastMonthAt() * 1000 + DAY * 1000).toISOString().slice(0, 10);
    if (after < day()) expect((await rowOf('revenue', after))[1]).toBe('$0.00');
    // Refunds are measured from the lifecycle's first day (a measured $0.00 today); before it, never drawn as 0.
    expect((await rowOf('revenue', day()))[2]).toBe('$0.00');
    expect((await rowOf('revenue', day(-89)))[2]).toMatch(/^—\s*not measured$/);
    await card('revenue').getByText('Gaps are periods not measured (not zero).').waitFor();
    // The MRR line starts where measuring starts, not at the left edge with a 0.
    const grid = (await card('mrr').locator('.recharts-cartesian-grid').boundingBox())!;
    const line = (await card('mrr').locator('.recharts-line-curve').first().boundingBox())!;
    expect(line.x).toBeGreaterThan(grid.x + grid.width * 0.3);
  });

  it('the range, granularity and split change the data', async () => {
    await openOverview();
    const week = chartsCall({ from: day(-6), to: day() });
    await page().getByRole('button', { name: '7 days' }).click();
    await week;
    expect(await (await tableOf('mrr')).locator('tbody tr').count()).toBe(7);

    // Weeks start on Monday: each row names the week by its Monday.
    const weekly = chartsCall({ granularity: 'week' });
    await page().getByRole('radio', { name: 'week' }).check();
    await weekly;
    const weeks = await tableOf('revenue');
    expect(await weeks.locator('caption').innerText()).toMatch(/^Revenue per week, /);
    const weekNames = await weeks.locator('tbody th').allInnerTexts();
    expect(weekNames.length).toBeGreaterThanOrEqual(1);
    expect(weekNames.length).toBeLessThanOrEqual(2);
    for (const name of weekNames) {
      expect(name).toMatch(/^week of \d{4}-\d{2}-\d{2}$/);
      expect(new Date(`${name.slice(8)}T00:00:00Z`).getUTCDay()).toBe(1);
    }

    const monthly = chartsCall({ granularity: 'month' });
    await page().getByRole('radio', { name: 'month' }).check();
    await monthly;
    const months = await tableOf('revenue');
    expect(await months.locator('caption').innerText()).toMatch(/^Revenue per month, /);
    expect(await months.locator('tbody tr').last().locator('th').innerText()).toBe(day().slice(0, 7));

    // Dates typed: a range ending before it starts is refused next to its field, and nothing is read.
    await page().getByLabel('From').fill(day(1));
    await page().getByRole('alert').filter({ hasText: 'From must be on or before To' }).waitFor();
    expect(await page().getByLabel('From').getAttribute('aria-invalid')).toBe('true');
    const typed = chartsCall({ from: day(-60), to: day(), granularity: 'month' });
    await page().getByLabel('From').fill(day(-60));
    await typed;
    expect(await (await tableOf('revenue')).locator('tbody tr').count()).toBeGreaterThanOrEqual(3);
    expect(await (await tableOf('revenue')).locator('tbody tr').first().locator('th').innerText()).toBe(day(-60).slice(0, 7));

    const split = chartsCall({ segment: 'rail' });
    await page().getByLabel('Split').selectOption('rail');
    await split;
    const byRail = await tableOf('mrr');
    expect(await byRail.locator('thead th').allInnerTexts()).toEqual(['Period', 'MRR: App Store', 'MRR: Card payments', 'MRR: Play Store']);
    expect((await byRail.locator('tbody tr').last().locator('td').allInnerTexts())[1]).toBe('$20.00');
    await card('mrr').locator('.recharts-legend-item-text', { hasText: 'MRR: Card payments' }).waitFor();
    // By product: one column per product in force, the others as they were.
    const byProduct = chartsCall({ segment: 'product' });
    await page().getByLabel('Split').selectOption('product');
    await byProduct;
    const products = await tableOf('mrr');
    expect(await products.locator('thead th').allInnerTexts()).toEqual(['Period', 'MRR: prod_pro']);
    expect((await products.locator('tbody tr').last().locator('td').allInnerTexts())[0]).toBe('$20.00');
    // The charts that do not split stay whole.
    expect(await (await tableOf('events')).locator('thead th').allInnerTexts()).toEqual(['Period', 'Events', 'Errors', 'Active customers']);
  });

  it('axe finds nothing in either environment, in dark colours, or 390 px wide; the README pictures', async () => {
    for (const env of ['sandbox', 'production'] as const) {
      await openOverview();
      await switchTo(env);
      await settled(page());
      await card('mrr').getByRole('application').waitFor();
      await tableOf('mrr');
      await checkPage(page(), `overview-charts-${env}`);
    }
    await switchTo('sandbox');
    await openOverview();
    publish(await checkPage(page(), 'overview-charts-light'), 'console-overview.png');
    await page().emulateMedia({ colorScheme: 'dark' });
    try {
      await openOverview();
      expect(await page().evaluate<string>('getComputedStyle(document.documentElement).backgroundColor')).toBe('rgb(13, 17, 23)');
      // Series take the dark palette.
      expect(
        await card('mrr')
          .locator('.recharts-line-curve')
          .first()
          .evaluate((node) => (globalThis as any).getComputedStyle(node).stroke),
      ).toBe('rgb(57, 197, 207)');
      publish(await checkPage(page(), 'overview-charts-dark'), 'console-overview-dark.png');
      await tableOf('revenue');
      await checkPage(page(), 'overview-charts-dark-table');
    } finally {
      await page().emulateMedia({ colorScheme: 'light' });
    }
    await page().setViewportSize({ width: 390, height: 844 });
    try {
      await openOverview();
      await checkPage(page(), 'overview-charts-390');
    } finally {
      await page().setViewportSize({ width: 1280, height: 800 });
    }
  }, 120_000);
});
