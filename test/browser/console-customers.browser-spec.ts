import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { createProject, createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { seedRailSubscription, type SeededRailSubscription } from '../support/factories/subscriptions.js';
import { seedCustomerRevenue, seedCustomers } from '../support/factories/revenue.js';
import { testScope } from '../support/scopes.js';
import { TEST_OPERATOR_TOKEN, createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { launchBrowser, type BrowserSession } from './support/browser.js';
import { buildConsole, checkPage, settled } from './support/console.js';

const tag = () => randomUUID().replace(/-/g, '').slice(0, 10);
const BULK = 30;
const CARD_SECRET = 'whsec_customers_0123456789abcdefghij';
const DAY = 86_400;

/**
 * The customer list and the customer page in Chromium against the real service and database:
 * partial search, filters, the server's sort, cursor pages, the CSV export with the filters,
 * the person in the heading with MRR and state badges, every trait, each subscription's lifecycle
 * and the subscription history (signed card events) with its older pages; axe finds nothing in
 * either environment, at 1280 and 390 px.
 */
describe('operator console: the customer list and the customer page', () => {
  let t: TestApp;
  let baseUrl = '';
  let browser: BrowserSession;
  let fx: ProjectFixture;
  const k = tag();
  const star = { userId: `Star_${k}`, email: `Star.${k}@Example.com`, id: '' };
  const prod = { userId: `prod_${k}`, id: '' };
  const renewing = { userId: `renewing_${k}`, id: '', subscriptionId: `sub_${k}`, events: [] as string[] };
  const pausing = { userId: `pausing_${k}`, id: '', subscriptionId: `sub_p_${k}` };
  let secrets: RailSecretsFile;
  /** A project of its own for the card lifecycle, so the list's counts and filters above stay as they are. */
  let lifecycleFx: ProjectFixture;

  const page = () => browser.page;
  /** Opens a page afresh (a reload: the same hash would keep the list's search and filters). */
  const open = async (path: string) => {
    await page().goto(`${baseUrl}/console/#${path}`);
    await page().reload();
  };
  const rows = () => page().locator('main table tbody tr');
  const switchTo = async (env: 'sandbox' | 'production') => {
    await page().getByRole('radio', { name: env }).check();
    await page().getByRole('radio', { name: env, checked: true }).waitFor();
  };

  const subscription = (customerId: string, o: SeededRailSubscription & { raw: string }) =>
    seedRailSubscription(t.dataSource, testScope(fx.projectId), customerId, o);

  beforeAll(async () => {
    buildConsole();
    secrets = new RailSecretsFile();
    t = await createTestApp({ LOG_LEVEL: 'warn', RAIL_SECRETS_FILE: secrets.path });
    await t.app.listen(0, '127.0.0.1');
    const address = t.app.getHttpServer().address();
    if (!address || typeof address === 'string') throw new Error('the test app is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    fx = await createProjectWithApp(t, { projectId: await createProject(t, `Customers ${k}`) });
    // Thirty customers, oldest first, so that the newest-first list has two pages of 25.
    await seedCustomers(
      t.dataSource,
      testScope(fx.projectId),
      Array.from({ length: BULK }, (_, n) => ({
        id: `cdcust_list${String(n + 1).padStart(3, '0')}${k}`,
        email: `member${n + 1}@example.com`,
        createdAt: new Date(Date.UTC(2026, 0, 1) + (n + 1) * 3_600_000),
      })),
    );
    const identified = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ userId: star.userId, anonymousId: `anon_${k}`, email: star.email, traits: { plan: 'pro', seats: 5, beta: true } });
    expect(identified.status).toBe(200);
    star.id = identified.body.serviceCustomerId;
    await subscription(star.id, { raw: 'active', product: 'price_star' });
    await subscription(star.id, { raw: 'active', rail: 'ios_store', product: 'com.app.star' });
    await seedCustomerRevenue(t.dataSource, testScope(fx.projectId), star.id, 4999);
    await subscription(`cdcust_list001${k}`, { raw: 'past_due' });
    await subscription(`cdcust_list002${k}`, { raw: 'canceled', state: 'inactive' });
    const live = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skLive))
      .send({ userId: prod.userId, anonymousId: `anon_p_${k}` });
    expect(live.status).toBe(200);
    prod.id = live.body.serviceCustomerId;
    await cardLifecycle();

    browser = await launchBrowser();
    await page().goto(`${baseUrl}/console/`);
    await page().getByLabel('Operator token').fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await switchTo('sandbox');
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    secrets?.remove();
  });

  /**
   * A card subscription of `renewing` through signed processor events: started, auto-renew turned
   * off and on five times, turned off again, then a failed renewal in a 3-day grace period: 13
   * lifecycle events, newest the billing issue.
   */
  async function cardLifecycle() {
    lifecycleFx = await createProjectWithApp(t, { projectId: await createProject(t, `Lifecycle ${k}`) });
    const fx = lifecycleFx;
    secrets.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [CARD_SECRET] } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    const rail = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`)
      .set(operatorAuth())
      .send({ accountId: 'acct_customers', gracePeriodDays: 3 });
    expect(rail.status).toBe(200);
    const catalogue = { products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }] };
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/products`).set(operatorAuth()).send(catalogue)).status).toBe(200);
    const identified = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ userId: renewing.userId, anonymousId: `anon_r_${k}` });
    renewing.id = identified.body.serviceCustomerId;
    const t0 = Math.floor(t.clock.nowMs() / 1000);
    const sub = (o: { status?: string; cancel?: boolean; start: number; end: number }) => ({
      id: renewing.subscriptionId,
      object: 'subscription',
      customer: `cus_${k}`,
      status: o.status ?? 'active',
      livemode: false,
      start_date: t0 - 30 * DAY,
      created: t0 - 30 * DAY,
      trial_end: null,
      cancel_at_period_end: o.cancel ?? false,
      pause_collection: null,
      metadata: { developerUserId: renewing.userId },
      items: {
        object: 'list',
        data: [
          {
            id: `si_${k}`,
            object: 'subscription_item',
            current_period_start: o.start,
            current_period_end: o.end,
            quantity: 1,
            price: { id: `price_${k}`, product: 'prod_pro', unit_amount: 1299, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
          },
        ],
      },
    });
    const paid = { start: t0 - 30 * DAY, end: t0 };
    const steps: [string, ReturnType<typeof sub>][] = [['customer.subscription.created', sub(paid)]];
    for (let i = 0; i < 5; i++) steps.push(['customer.subscription.updated', sub({ ...paid, cancel: true })], ['customer.subscription.updated', sub(paid)]);
    steps.push(['customer.subscription.updated', sub({ ...paid, cancel: true })]);
    steps.push(['customer.subscription.updated', sub({ status: 'past_due', cancel: true, start: t0, end: t0 + 30 * DAY })]);
    for (const [i, [type, object]] of steps.entries()) {
      const id = `evt_${k}_${i}`;
      const payload = JSON.stringify({ id, object: 'event', api_version: '2025-03-31.basil', created: t0 - 20 + i, livemode: false, type, data: { object } });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: CARD_SECRET, timestamp: t0 });
      const res = await t.http
        .post(`/v1/webhooks/card_payments/${fx.projectId}`)
        .set({ 'Content-Type': 'application/json', 'Stripe-Signature': signature })
        .send(payload);
      expect(res.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: renewing.id }));
      renewing.events.push(id);
    }

    // A second customer: a trial with a move to another product scheduled for the next period, then paused.
    const trial = { start: t0 - DAY, end: t0 + 13 * DAY };
    const paused = (pause: boolean) => ({
      ...sub(trial),
      id: pausing.subscriptionId,
      customer: `cus_p_${k}`,
      status: 'trialing',
      start_date: t0 - DAY,
      created: t0 - DAY,
      trial_end: trial.end,
      pause_collection: pause ? { behavior: 'void', resumes_at: t0 + 20 * DAY } : null,
      metadata: { developerUserId: pausing.userId },
      schedule: {
        id: `sub_sched_${k}`,
        phases: [
          { start_date: trial.start, items: [{ price: { id: `price_${k}`, product: 'prod_pro' } }] },
          { start_date: trial.end, items: [{ price: { id: `price_max_${k}`, product: 'prod_max' } }] },
        ],
      },
    });
    for (const [i, [type, object]] of (
      [
        ['customer.subscription.created', paused(false)],
        ['customer.subscription.updated', paused(true)],
      ] as const
    ).entries()) {
      const payload = JSON.stringify({
        id: `evt_p_${k}_${i}`,
        object: 'event',
        api_version: '2025-03-31.basil',
        created: t0 - 10 + i,
        livemode: false,
        type,
        data: { object },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: CARD_SECRET, timestamp: t0 });
      const res = await t.http
        .post(`/v1/webhooks/card_payments/${fx.projectId}`)
        .set({ 'Content-Type': 'application/json', 'Stripe-Signature': signature })
        .send(payload);
      expect(res.body).toEqual(expect.objectContaining({ decision: 'applied' }));
      pausing.id = res.body.serviceCustomerId;
    }
  }

  it('lists every customer a page at a time, newest first', async () => {
    await open(`/p/${fx.projectId}/customers`);
    await settled(page());
    await rows().first().waitFor();
    expect(await rows().count()).toBe(25);
    // The identified customer is the newest.
    await rows().first().getByRole('link', { name: star.id }).waitFor();
    const shot = await checkPage(page(), 'customers-list');
    // The docs' picture of the list: written when missing or with UPDATE_CONSOLE_PNG=1, so runs leave the tree clean.
    const picture = join(__dirname, '..', '..', 'docs', 'console-customers.png');
    if (!existsSync(picture) || process.env.UPDATE_CONSOLE_PNG === '1') copyFileSync(shot, picture);
    await page().getByRole('button', { name: 'Next' }).click();
    await page().getByText('Page 2').waitFor();
    await rows()
      .getByRole('link', { name: `cdcust_list001${k}` })
      .waitFor();
    expect(await rows().count()).toBe(BULK + 1 - 25);
    expect(await page().getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await page().getByRole('button', { name: 'Previous' }).click();
    await page().getByText('Page 1').waitFor();
    await rows().first().getByRole('link', { name: star.id }).waitFor();
  });

  it('finds a customer by part of its email in another case, and by the start of its user id', async () => {
    await open(`/p/${fx.projectId}/customers`);
    await settled(page());
    for (const q of [`STAR.${k.toUpperCase()}@EXAMPLE`, `star_${k.slice(0, 4)}`, `${k}@example.com`.toUpperCase()]) {
      await page().getByLabel('Find a customer').fill(q);
      await page().getByRole('button', { name: 'Search' }).click();
      await page().getByRole('link', { name: star.id }).waitFor();
      await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 1);
    }
    await page().getByLabel('Find a customer').fill(`nobody_${k}`);
    await page().getByRole('button', { name: 'Search' }).click();
    await page().getByText(`No customer matches “nobody_${k}” in sandbox.`).waitFor();
  });

  it('finds customers by the start of a cdcust_ id in any case; filters by product; sorts by created oldest first and by last seen', async () => {
    await open(`/p/${fx.projectId}/customers`);
    await settled(page());
    // Ten ids start with cdcust_list01 (customers 10 to 19), typed in upper case.
    await page().getByLabel('Find a customer').fill('CDCUST_LIST01');
    await page().getByRole('button', { name: 'Search' }).click();
    await page()
      .getByRole('link', { name: `cdcust_list010${k}` })
      .waitFor();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 10);
    await page().getByLabel('Find a customer').fill('');
    await page().getByRole('button', { name: 'Search' }).click();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 25);

    // The product filter keeps the customer with that product, whichever of its rails sells it.
    await page().getByLabel('Product', { exact: true }).fill('com.app.star');
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 1);
    await rows().first().getByRole('link', { name: star.id }).waitFor();
    await page().getByLabel('Product', { exact: true }).fill('');
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 25);

    // Oldest first: the first bulk customer leads; by last seen, nobody seen yet reads "never", and the page still fills.
    await page().getByLabel('Sort by', { exact: true }).selectOption('created');
    await page().getByLabel('Order', { exact: true }).selectOption('asc');
    await rows()
      .first()
      .getByRole('link', { name: `cdcust_list001${k}` })
      .waitFor();
    await page().getByLabel('Sort by', { exact: true }).selectOption('last_seen');
    await page().getByLabel('Order', { exact: true }).selectOption('desc');
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 25);
    await rows().first().getByText('never').waitFor();
    await expect(page().getByRole('alert').count()).resolves.toBe(0);
  });

  it('filters by state, rail and paying, sorts by MRR, and exports the filtered list as CSV', async () => {
    await open(`/p/${fx.projectId}/customers`);
    await settled(page());
    await page().getByLabel('State', { exact: true }).selectOption('billing_issue');
    await page()
      .getByRole('link', { name: `cdcust_list001${k}` })
      .waitFor();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 1);
    await rows().first().getByText('Billing issue').waitFor();

    await page().getByLabel('State', { exact: true }).selectOption('expired');
    await page()
      .getByRole('link', { name: `cdcust_list002${k}` })
      .waitFor();

    await page().getByLabel('State', { exact: true }).selectOption('');
    await page().getByLabel('Rail', { exact: true }).selectOption('ios_store');
    await page().getByRole('link', { name: star.id }).waitFor();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 1);
    await page().getByLabel('Rail', { exact: true }).selectOption('');

    // Sorted by MRR: lowest first, the one paying customer is not on top; highest first, it is.
    await page().getByLabel('Sort by', { exact: true }).selectOption('mrr');
    await page().getByLabel('Order', { exact: true }).selectOption('asc');
    await page().waitForFunction((id) => (globalThis as any).document.querySelector('main table tbody tr a')?.textContent !== id, star.id);
    await page().getByLabel('Order', { exact: true }).selectOption('desc');
    await rows().first().getByRole('link', { name: star.id }).waitFor();
    await rows().first().getByText('$49.99').waitFor();

    await page().getByLabel('Paying', { exact: true }).selectOption('true');
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('main table tbody tr').length === 1);
    const link = page().getByRole('link', { name: 'Export CSV' });
    const exported = new URL((await link.getAttribute('href'))!, baseUrl);
    expect(Object.fromEntries(exported.searchParams)).toEqual({ env: 'sandbox', paying: 'true', sort: 'mrr', order: 'desc' });
    const [download] = await Promise.all([page().waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('customers-sandbox.csv');
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.split('\r\n').filter((line) => line !== '');
    expect(lines[0]).toBe('customer_id,user_id,email,states,rails,products,mrr_minor,currency,paying,last_seen_day,created_at');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([star.id]);
    expect(lines[1]).toContain(`${star.id},${star.userId},${star.email},active,card_payments ios_store,com.app.star price_star,4999,USD,true,`);
  });

  it('names the person in the heading with MRR and one badge per state, and shows every trait', async () => {
    await open(`/p/${fx.projectId}/customers/${star.id}`);
    await page().getByRole('heading', { name: star.userId, level: 1 }).waitFor();
    const person = page().locator('main .person');
    await person.getByText(star.email).waitFor();
    await person.getByText('MRR $49.99').waitFor();
    // Two active subscriptions: one "Active" badge, never "active active".
    expect(await person.locator('.badge').allTextContents()).toEqual(['MRR $49.99', 'Paying', 'Active']);
    const traits = page().locator('main dl.traits');
    for (const [key, value] of [
      ['email', star.email],
      ['plan', 'pro'],
      ['seats', '5'],
      ['beta', 'true'],
    ]) {
      await traits
        .locator('div', { has: page().locator('dt', { hasText: new RegExp(`^${key}$`) }) })
        .locator('dd', { hasText: value })
        .waitFor();
    }
    expect(
      await page()
        .getByRole('cell', { name: /active active/i })
        .count(),
    ).toBe(0);
  });

  it("shows each subscription's lifecycle and the subscription history, newest first, with older pages", async () => {
    await open(`/p/${lifecycleFx.projectId}/customers/${renewing.id}`);
    await page().getByRole('heading', { name: renewing.userId, level: 1 }).waitFor();
    const subscriptions = page().locator('section', { has: page().getByRole('heading', { name: 'Subscriptions', level: 2 }) });
    const card = subscriptions.getByRole('article', { name: 'prod_pro (card_payments)' });
    await card.waitFor();
    expect(await card.locator('.badge').allTextContents()).toEqual(['In grace period', 'Auto-renew off', 'Billing issue']);
    const fact = async (term: string) =>
      (await card
        .locator('dl.facts div', { has: page().locator('dt', { hasText: new RegExp(`^${term}$`) }) })
        .locator('dd')
        .textContent()) ?? '';
    expect(await fact('Subscription')).toBe(renewing.subscriptionId);
    expect(await fact('Price')).toContain('$12.99');
    expect(await fact('Renewal')).toMatch(/^does not renew · unsubscribed \d{4}-/);
    expect(await fact('Billing issue')).toMatch(/^since .+ · grace period ends \d{4}-/);
    expect(await fact('Updated')).toContain('rail status past_due');

    const history = page().getByRole('list', { name: 'Lifecycle events, newest first' });
    await history.waitFor();
    const items = history.getByRole('listitem');
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('.lifecycle-history li').length === 10);
    await items.first().getByText('Billing issue', { exact: true }).waitFor();
    expect(await items.first().textContent()).toContain(`rail event ${renewing.events[12]}`);
    expect(await items.nth(1).textContent()).toContain('Auto-renew turned off');
    await page().getByText('10 events shown; older ones remain.').waitFor();
    await checkPage(page(), 'customer-lifecycle');
    await page().getByRole('button', { name: 'Show older events' }).click();
    await page().getByText('13 events shown, back to the first.').waitFor();
    expect(await items.count()).toBe(13);
    expect(await items.last().textContent()).toContain('Started');
    expect(await items.last().textContent()).toContain(`rail event ${renewing.events[0]}`);
    expect(await page().getByRole('button', { name: 'Show older events' }).count()).toBe(0);
    await page().setViewportSize({ width: 390, height: 844 });
    try {
      await checkPage(page(), 'customer-lifecycle-390');
    } finally {
      await page().setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a paused trial with its scheduled product change: badges and facts', async () => {
    await open(`/p/${lifecycleFx.projectId}/customers/${pausing.id}`);
    await page().getByRole('heading', { name: pausing.userId, level: 1 }).waitFor();
    const card = page().getByRole('article', { name: 'prod_pro (card_payments)' });
    await card.waitFor();
    expect(await card.locator('.badge').allTextContents()).toEqual(['Paused', 'Pending product change']);
    const fact = async (term: string) =>
      (await card
        .locator('dl.facts div', { has: page().locator('dt', { hasText: new RegExp(`^${term}$`) }) })
        .locator('dd')
        .textContent()) ?? '';
    expect(await fact('Pause')).toMatch(/^paused .+ · resumes by itself \d{4}-/);
    expect(await fact('Pending product')).toBe('prod_max at the next renewal');
    await checkPage(page(), 'customer-paused');
  });

  it('passes axe with nothing of any impact in both environments, and fits 390 px', async () => {
    const pages: [string, string, string][] = [
      ['sandbox', `/p/${fx.projectId}/customers`, 'list'],
      ['sandbox', `/p/${fx.projectId}/customers/${star.id}`, 'customer'],
      ['production', `/p/${fx.projectId}/customers`, 'list'],
      ['production', `/p/${fx.projectId}/customers/${prod.id}`, 'customer'],
    ];
    try {
      for (const width of [1280, 390]) {
        await page().setViewportSize({ width, height: width === 390 ? 844 : 800 });
        for (const [env, path, name] of pages) {
          await open('/');
          await switchTo(env as 'sandbox' | 'production');
          await open(path);
          await settled(page());
          if (name === 'list') await rows().first().waitFor();
          else await page().getByRole('heading', { name: 'Traits' }).waitFor();
          await checkPage(page(), `customers-${width}-${env}-${name}`);
        }
      }
      await page().getByRole('heading', { name: prod.userId, level: 1 }).waitFor();
    } finally {
      await page().setViewportSize({ width: 1280, height: 800 });
      await switchTo('sandbox');
    }
  }, 180_000);
});
