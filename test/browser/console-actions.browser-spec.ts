import { randomBytes, randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { WebhookDispatcher } from '#webhooks';
import { CardProcessorStandIn } from '../support/card-processor-standin.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { TEST_OPERATOR_TOKEN, operatorAuth } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';
import { launchBrowser, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';
import { buildConsole, checkPage } from './support/console.js';

const CARD_SECRET = `whsec_${randomBytes(20).toString('hex')}`;
const CARD_API_KEY = `rk_test_${randomBytes(24).toString('hex')}`;
const DAY = 86_400;
const uid = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/**
 * More of the console in Chromium against the real service and database: workspace keys
 * (created and shown once, revoked with a typed confirmation), a dead webhook delivery
 * retried, a customer refreshed from the card processor (its stand-in), and an app's settings
 * saved after an inline validation error. Every view passes axe.
 */
describe('operator console: keys, deliveries, refresh, app settings', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let secrets: RailSecretsFile;
  let receiver: WebhookReceiver;
  const card = new CardProcessorStandIn(CARD_API_KEY);
  let fx: ProjectFixture;

  const page = () => browser.page;
  const http = () => served.t.http;
  const now = () => Math.floor(served.t.clock.nowMs() / 1000);
  const open = (path: string) => page().goto(`${served.baseUrl}/console/#${path}`);

  const signIn = async () => {
    await page().goto(`${served.baseUrl}/console/`);
    await page().getByLabel('Operator token').fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  };

  beforeAll(async () => {
    buildConsole();
    await card.start();
    receiver = await startWebhookReceiver();
    secrets = new RailSecretsFile();
    served = await serveTestApp({
      RAIL_SECRETS_FILE: secrets.path,
      CARD_PAYMENTS_API_BASE_URL: card.baseUrl,
      LOG_LEVEL: 'warn',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_SIGNING_KEY: 'console-signing-key-0123456789abcdef0123',
    });
    fx = await createProjectWithApp(served.t);
    browser = await launchBrowser();
    await signIn();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.t.close();
    await card.stop();
    await receiver?.close();
    secrets?.remove();
  });

  it('creates a workspace key shown once, and revokes it with a typed confirmation', async () => {
    const name = `Console workspace ${uid('ws')}`;
    const workspace = (await http().post('/admin/v1/workspaces').set(operatorAuth()).send({ name })).body;
    expect((await http().post(`/admin/v1/workspaces/${workspace.id}/projects/${fx.projectId}`).set(operatorAuth())).status).toBeLessThan(300);
    await open('/workspaces');
    const panel = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name }) });
    await panel.getByRole('button', { name: 'Show keys' }).click();
    await panel.getByRole('button', { name: 'Create workspace key' }).click();
    const dialog = page().getByRole('dialog');
    const key = (await dialog.getByTestId('secret').textContent())!.trim();
    expect(key).toMatch(/^cd_wk_/);
    await checkPage(page(), 'workspace-key-dialog');
    const stored = await page().evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(stored).not.toContain(key);
    await dialog.getByRole('button', { name: 'Done' }).click();
    const read = () =>
      http()
        .get('/v1/revenue')
        .query({ project: fx.projectId })
        .set({ Authorization: `Bearer ${key}` });
    expect((await read()).status).not.toBe(401);

    const keyId = (await http().get(`/admin/v1/workspaces/${workspace.id}/keys`).set(operatorAuth())).body.data[0].id as string;
    await panel.getByRole('button', { name: `Revoke workspace key ending ${key.slice(-4)}` }).click();
    const confirm = page().getByRole('dialog');
    const revoke = confirm.getByRole('button', { name: 'Revoke key' });
    expect(await revoke.isDisabled()).toBe(true);
    await checkPage(page(), 'workspace-key-revoke');
    await confirm.getByLabel(`Type ${keyId} to confirm`).fill(keyId);
    await revoke.click();
    await panel.getByText('revoked', { exact: true }).waitFor();
    expect((await read()).status).toBe(401);
    await checkPage(page(), 'workspace-keys');
  });

  it('retries a dead webhook delivery, which then succeeds', async () => {
    const path = `/hooks/${uid('dead')}`;
    receiver.on(path, 500);
    const endpoint = await http()
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(path), env: 'sandbox', eventTypes: ['entitlement.granted_manually'] });
    expect(endpoint.status).toBe(201);
    const identified = await http()
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ userId: uid('user'), anonymousId: uid('anon') });
    expect(identified.status).toBe(200);
    const customerId = identified.body.serviceCustomerId as string;
    const granted = await http()
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: 'Goodwill credit after the checkout outage' });
    expect([granted.status, granted.body.error?.message]).toEqual([200, undefined]);
    const drain = () => served.t.app.get(WebhookDispatcher).drain();
    await drain();
    // The retry schedule on the service clock: nine attempts, then dead.
    for (const seconds of [10, 60, 300, 1800, 7200, 21600, 43200, 86400]) {
      expect((await http().post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds })).status).toBeLessThan(300);
      await drain();
    }
    const deliveries = await http().get(`/admin/v1/webhook-endpoints/${endpoint.body.id}/deliveries`).set(operatorAuth());
    expect(deliveries.body.data).toEqual([expect.objectContaining({ status: 'dead', attempts: 9 })]);
    receiver.on(path, 204);
    // The session (12 hours on the service clock) ended while the clock moved.
    await signIn();

    await open(`/p/${fx.projectId}/webhooks/${endpoint.body.id}`);
    const row = page().getByRole('row').filter({ hasText: 'entitlement.granted_manually' });
    await row.getByText('dead').waitFor();
    await checkPage(page(), 'webhook-dead-delivery');
    await row.getByRole('button', { name: 'Retry' }).click();
    await page().getByText('Delivery queued again.').waitFor();
    await drain();
    await page().reload();
    await page().getByRole('row').filter({ hasText: 'entitlement.granted_manually' }).getByText('succeeded').waitFor();
    expect(receiver.of(path).length).toBe(10);
  });

  it('refreshes a customer from the card processor: a renewal the notification missed', async () => {
    secrets.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [CARD_SECRET], apiKey: CARD_API_KEY } } } });
    served.t.app.get(RailSecrets).reloadIfChanged();
    expect((await http().put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_console' })).status).toBe(
      200,
    );
    const catalogue = { products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }] };
    expect((await http().put(`/admin/v1/projects/${fx.projectId}/products`).set(operatorAuth()).send(catalogue)).status).toBe(200);
    const customer = uid('cus');
    const sub = card.subscription(uid('sub'), customer, { productId: 'prod_pro', periodEnd: now() + 60, livemode: false });
    const payload = JSON.stringify({
      id: uid('evt'),
      object: 'event',
      created: now(),
      livemode: false,
      type: 'customer.subscription.created',
      data: { object: sub },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: CARD_SECRET, timestamp: now() });
    const notified = await http()
      .post(`/v1/webhooks/card_payments/${fx.projectId}`)
      .set({ 'Content-Type': 'application/json', 'Stripe-Signature': signature })
      .send(payload);
    expect(notified.status).toBe(200);
    const customerId = notified.body.serviceCustomerId as string;
    // The processor renewed the subscription; the notification of it never arrived.
    card.subscription(sub.id as string, customer, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });

    await open(`/p/${fx.projectId}/customers/${customerId}`);
    await page().locator('.timeline li').first().waitFor();
    await page().getByRole('button', { name: 'Refresh from the rails' }).click();
    await page().getByText('Refreshed from the rails.').waitFor();
    await page().locator('.timeline li').first().filter({ hasText: 'reconciliation' }).waitFor();
    expect(card.calls).toEqual(expect.arrayContaining([`GET /v1/customers/${customer}`]));
    await checkPage(page(), 'customer-refreshed');
  });

  it("edits an app's settings: an invalid SDK floor is answered next to its field, a valid one is saved", async () => {
    await open(`/p/${fx.projectId}/apps/${fx.appId}`);
    await page().getByRole('heading', { name: 'Settings' }).waitFor();
    const floor = page().getByLabel('SDK floor (minimum version)');
    await floor.fill('latest');
    await page().getByRole('button', { name: 'Save settings' }).click();
    await page().getByRole('alert').filter({ hasText: 'sdkMinVersion must be a version like 1.2.0' }).first().waitFor();
    expect(await floor.getAttribute('aria-invalid')).toBe('true');
    expect(await floor.getAttribute('aria-describedby')).toBeTruthy();
    await checkPage(page(), 'app-settings-invalid');
    await floor.fill('2.1.0');
    await page().getByLabel('Deprecated SDK versions').fill('1.0.0 1.1.0');
    await page().getByRole('button', { name: 'Save settings' }).click();
    await page().getByText('Saved.').waitFor();
    const app = (await http().get(`/admin/v1/apps/${fx.appId}`).set(operatorAuth())).body;
    expect(app).toEqual(expect.objectContaining({ sdkMinVersion: '2.1.0', sdkDeprecatedVersions: ['1.0.0', '1.1.0'] }));
    await checkPage(page(), 'app-settings-saved');
  });
});
