import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { EventIdentityResolver } from '#telemetry';
import { CardProcessorStandIn } from '../support/card-processor-standin.js';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { TEST_OPERATOR_TOKEN, operatorAuth } from '../support/test-app.js';
import { launchBrowser, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';
import { buildConsole, checkPage, settled } from './support/console.js';

const CARD_SECRET = `whsec_${randomBytes(20).toString('hex')}`;
const CARD_API_KEY = `rk_test_${randomBytes(24).toString('hex')}`;
const USERS = 55;

/** The docs' pictures of these pages: written when missing or with UPDATE_CONSOLE_PNG=1, so runs leave the tree clean. */
function publish(path: string, name: string): void {
  const target = join(__dirname, '..', '..', 'docs', name);
  if (!existsSync(target) || process.env.UPDATE_CONSOLE_PNG === '1') copyFileSync(path, target);
}

/**
 * The rails and errors pages in Chromium against the real service and database: a rail
 * configured in the page and saved, test connection against the card processor's stand-in
 * (success, then a refused key), notifications paged; error issues titled by exception with
 * their level and sorted on the server, an issue's events paged with their stacks and its
 * users paged with the total. axe finds nothing in both environments, also 390 px wide.
 */
describe('operator console: rails set-up and errors that read like errors', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let secrets: RailSecretsFile;
  const card = new CardProcessorStandIn(CARD_API_KEY);
  let fx: ProjectFixture;
  const busy = randomBytes(4).toString('hex');
  const quiet = randomBytes(4).toString('hex');

  const page = () => browser.page;
  const http = () => served.t.http;
  const open = (path: string) => page().goto(`${served.baseUrl}/console/#${path}`);
  const switchTo = async (env: 'sandbox' | 'production') => {
    await page().getByRole('radio', { name: env }).check();
    await page().getByRole('radio', { name: env, checked: true }).waitFor();
  };
  const writeSecrets = (apiKey: string) => {
    secrets.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [CARD_SECRET], apiKey } } } });
    served.t.app.get(RailSecrets).reloadIfChanged();
  };

  beforeAll(async () => {
    buildConsole();
    await card.start();
    secrets = new RailSecretsFile();
    served = await serveTestApp({ RAIL_SECRETS_FILE: secrets.path, CARD_PAYMENTS_API_BASE_URL: card.baseUrl, LOG_LEVEL: 'warn' });
    fx = await createProjectWithApp(served.t);
    writeSecrets(CARD_API_KEY);
    await setRateLimits(served.t, fx.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    expect((await http().put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_console' })).status).toBe(
      200,
    );
    // 23 card notifications (production events of a type the service ignores): two pages of 20.
    const now = Math.floor(served.t.clock.nowMs() / 1000);
    for (let i = 0; i < 23; i++) {
      const body = JSON.stringify({
        id: `evt_page_${i}_${randomUUID().slice(0, 6)}`,
        object: 'event',
        created: now,
        livemode: true,
        type: 'customer.created',
        data: { object: {} },
      });
      const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: CARD_SECRET, timestamp: now });
      const res = await http()
        .post(`/v1/webhooks/card_payments/${fx.projectId}`)
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', header)
        .send(body);
      expect(res.status).toBe(200);
    }
    // One issue that hit 55 users (one event each, each with its own stack), one quieter warning after it.
    const at = served.t.clock.nowMs() - 600_000;
    const events = Array.from({ length: USERS }, (_, i) => ({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: at + i * 1000,
      level: 'error',
      developerUserId: `user_${String(i).padStart(2, '0')}`,
      properties: {
        fingerprint: busy,
        errorType: 'TypeError',
        message: "Cannot read properties of undefined (reading 'plan')",
        frames: [{ function: `renderPlan${i}`, filename: 'https://app.example.com/static/main.js', lineno: 1, colno: i + 1, in_app: true }],
      },
    }));
    events.push({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: at + 120_000,
      level: 'warning',
      developerUserId: 'user_00',
      properties: { fingerprint: quiet, errorType: 'NetworkError', message: 'The request timed out', frames: [] } as never,
    });
    expect((await http().post('/v1/events').set(keyHeaders(fx, fx.keys.skTest)).send({ events })).status).toBe(202);
    await served.t.app.get(EventIdentityResolver).runOnce();
    browser = await launchBrowser();
    await page().goto(`${served.baseUrl}/console/`);
    await page().getByLabel('Operator token').fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.t.close();
    await card.stop();
    secrets?.remove();
  });

  it('configures rails in the page and sees them saved; the webhook URL is there to copy; refund requests listed with their state', async () => {
    await open(`/p/${fx.projectId}/rails`);
    await switchTo('production');
    await settled(page());
    const ios = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /iOS App Store/ }) });
    await ios.getByRole('button', { name: 'Enable iOS App Store' }).click();
    await ios.getByRole('alert').filter({ hasText: 'bundleId' }).waitFor();
    await ios.getByLabel('Bundle id').fill('com.example.console');
    await ios.getByLabel('App Apple id').fill('1234567890');
    await ios.getByLabel('Refund requests').selectOption('manual');
    await ios.getByRole('button', { name: 'Enable iOS App Store' }).click();
    await ios.getByText('iOS App Store settings saved; the rail is enabled.').waitFor();
    const android = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /Google Play/ }) });
    await android.getByLabel('Package name').fill('com.example.console');
    await android.getByRole('button', { name: 'Enable Google Play' }).click();
    await android.getByText('Google Play settings saved; the rail is enabled.').waitFor();
    const cardPanel = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /Card payments/ }) });
    await cardPanel.getByLabel('Grace days').fill('3');
    await cardPanel.getByRole('button', { name: 'Save Card payments settings' }).click();
    await cardPanel.getByText('Card payments settings saved; the rail is enabled.').waitFor();
    const rails = (await http().get(`/admin/v1/projects/${fx.projectId}/rails`).set(operatorAuth())).body;
    expect(rails.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rail: 'ios_store',
          bundleId: 'com.example.console',
          appAppleId: 1234567890,
          consumption: { mode: 'manual', customerConsented: false, refundPreference: 'no_preference', sampleContentProvided: false },
        }),
        expect.objectContaining({ rail: 'android_store', packageName: 'com.example.console' }),
        // The account id set before is kept beside the grace days the form saved.
        expect.objectContaining({ rail: 'card_payments', accountId: 'acct_console', gracePeriodDays: 3 }),
      ]),
    );
    await page().reload();
    await settled(page());
    await expect(ios.getByLabel('Bundle id').inputValue()).resolves.toBe('com.example.console');
    await expect(cardPanel.getByLabel('Grace days').inputValue()).resolves.toBe('3');
    await expect(ios.getByRole('button', { name: 'Save iOS App Store settings' }).isVisible()).resolves.toBe(true);
    await expect(ios.getByLabel('Refund requests').inputValue()).resolves.toBe('manual');
    // The App Store panel has its refund requests (none in this environment yet).
    await ios.getByRole('heading', { name: 'Refund requests' }).waitFor();
    await ios.getByText('No refund requests in this environment.').waitFor();
    // One arrives (recorded as the App Store notification records it): listed with its customer, deadline and state.
    const customerId = `cdcust_refund${randomBytes(4).toString('hex')}`;
    await served.t.dataSource.query(
      `INSERT INTO customers (id, project_id, env, email, traits, created_at, updated_at) VALUES ($1, $2, 'production', NULL, '{}', now(), now())`,
      [customerId, fx.projectId],
    );
    await served.t.dataSource.query(
      `INSERT INTO refund_requests (project_id, env, id, rail, subscription_id, customer_id, received_at, deadline, state, next_attempt_at_ms, created_at, updated_at)
       VALUES ($1, 'production', $2, 'ios_store', '2000000123456789', $3, now(), now() + interval '12 hours', 'pending', 0, now(), now())`,
      [fx.projectId, `cr_${randomBytes(6).toString('hex')}`, customerId],
    );
    await page().reload();
    await settled(page());
    const request = ios.getByRole('row').filter({ has: page().getByRole('link', { name: customerId }) });
    await request.waitFor();
    await request.getByText('pending').waitFor();
    await expect(ios.locator('.copy-url code').textContent()).resolves.toMatch(new RegExp(`^https?://[^/]+/v1/webhooks/ios_store/${fx.projectId}$`));
  });

  it('tests the card connection: success, then a key the processor refuses, keeping when it last worked', async () => {
    await open(`/p/${fx.projectId}/rails`);
    await settled(page());
    const cardPanel = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /Card payments/ }) });
    await cardPanel.getByText('store API credentials present').waitFor();
    await cardPanel.getByRole('button', { name: 'Test Card payments connection' }).click();
    await cardPanel.getByText(/Connection works: the card processor accepted the API key/).waitFor();
    writeSecrets('rk_test_refused_by_the_processor');
    await cardPanel.getByRole('button', { name: 'Test Card payments connection' }).click();
    await cardPanel.getByText(/Connection failed: customers.retrieve failed \(HTTP 401\)/).waitFor();
    await expect(cardPanel.locator('.connection').textContent()).resolves.not.toMatch(/last worked never/);
    writeSecrets(CARD_API_KEY);
  });

  it('pages through the notifications with time, type and decision', async () => {
    await open(`/p/${fx.projectId}/rails`);
    await switchTo('production');
    await settled(page());
    const cardPanel = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /Card payments/ }) });
    const table = cardPanel.getByRole('table');
    await expect(table.getByRole('columnheader').allTextContents()).resolves.toEqual(['Received', 'Type', 'Decision', 'Notification', 'Customer']);
    expect(await table.locator('tbody tr').count()).toBe(20);
    await expect(table.locator('tbody tr').first().textContent()).resolves.toContain('customer.created');
    await cardPanel.getByRole('button', { name: 'Next page' }).click();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('section.card')[1]?.querySelectorAll('tbody tr').length === 3);
    expect(await cardPanel.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await cardPanel.getByRole('button', { name: 'Previous page' }).click();
    await page().waitForFunction(() => (globalThis as any).document.querySelectorAll('section.card')[1]?.querySelectorAll('tbody tr').length === 20);
  });

  it('lists issues titled by exception with their level, sorted on the server', async () => {
    await open(`/p/${fx.projectId}/errors`);
    await switchTo('sandbox');
    await settled(page());
    const titles = () => page().locator('td.issue-title a').allTextContents();
    await expect(titles()).resolves.toEqual(['NetworkError: The request timed out', "TypeError: Cannot read properties of undefined (reading 'plan')"]);
    await expect(page().getByRole('table').getByRole('columnheader').allTextContents()).resolves.toContain('Level');
    await page().getByRole('table').getByText('warning').waitFor();
    await page().getByLabel('Sort by (most first)').selectOption('count');
    await page().waitForFunction(() => /TypeError/.test((globalThis as any).document.querySelector('td.issue-title a')?.textContent ?? ''));
    await page().getByLabel('Sort by (most first)').selectOption('users');
    await page().waitForFunction(() => /TypeError/.test((globalThis as any).document.querySelector('td.issue-title a')?.textContent ?? ''));
    // Revenue at risk: a column in money, the sort asked of the server; last seen puts the later warning first again.
    const sorted = page().waitForResponse((response) => new URL(response.url()).searchParams.get('sort') === 'revenue_at_risk');
    await page().getByLabel('Sort by (most first)').selectOption('revenue_at_risk');
    expect((await sorted).status()).toBe(200);
    await expect(page().getByRole('table').getByRole('columnheader').allTextContents()).resolves.toContain('Revenue at risk (monthly)');
    await page().getByRole('table').getByText('$0.00').first().waitFor();
    await page().getByLabel('Sort by (most first)').selectOption('last_seen');
    await page().waitForFunction(() => /NetworkError/.test((globalThis as any).document.querySelector('td.issue-title a')?.textContent ?? ''));
  });

  it("pages through an issue's events with their stacks and its users with the total", async () => {
    await open(`/p/${fx.projectId}/errors/${busy}`);
    await switchTo('sandbox');
    await settled(page());
    await page().getByRole('heading', { level: 1, name: "TypeError: Cannot read properties of undefined (reading 'plan')" }).waitFor();
    const stacks = () => page().locator('.issue-events ol.stack strong').allTextContents();
    await expect(stacks()).resolves.toEqual(['renderPlan54', 'renderPlan53', 'renderPlan52', 'renderPlan51', 'renderPlan50']);
    await page().getByRole('navigation', { name: 'Events pages' }).getByRole('button', { name: 'Next page' }).click();
    await page().waitForFunction(() => (globalThis as any).document.querySelector('.issue-events ol.stack strong')?.textContent === 'renderPlan49');
    await expect(stacks()).resolves.toEqual(['renderPlan49', 'renderPlan48', 'renderPlan47', 'renderPlan46', 'renderPlan45']);
    const users = page().getByRole('navigation', { name: 'Affected users pages' });
    await users.getByText(`Users 1–50 of ${USERS}`).waitFor();
    await users.getByRole('button', { name: 'Next page' }).click();
    await users.getByText(`Users 51–${USERS} of ${USERS}`).waitFor();
  });

  // Two pages in both environments, light and 390 px, each with axe and a screenshot: longer than one test's default time.
  it('passes axe in both environments, and 390 px wide', async () => {
    const pages = [
      [`/p/${fx.projectId}/rails`, 'rails'],
      [`/p/${fx.projectId}/errors`, 'errors'],
      [`/p/${fx.projectId}/errors/${busy}`, 'error-issue'],
    ];
    for (const env of ['production', 'sandbox'] as const) {
      for (const [path, name] of pages) {
        await open(path);
        await switchTo(env);
        const shot = await checkPage(page(), `errors-rails-${env}-${name}`);
        // Rails' notifications are production ones here, the errors sandbox ones.
        if ((name === 'rails') === (env === 'production')) publish(shot, `console-${name}.png`);
      }
    }
    await page().setViewportSize({ width: 390, height: 844 });
    try {
      for (const [path, name] of pages) {
        await open(path);
        await checkPage(page(), `errors-rails-390-${name}`);
      }
    } finally {
      await page().setViewportSize({ width: 1280, height: 800 });
    }
  }, 180_000);
});
