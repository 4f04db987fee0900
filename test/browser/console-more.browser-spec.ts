import { randomUUID } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import Stripe from 'stripe';
import { type Job, JobQueue, JobWorker, OnJob } from '#platform';
import { RailSecrets } from '#rails';
import { createProject, createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { TEST_OPERATOR_TOKEN, createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';
import { launchBrowser, type BrowserSession } from './support/browser.js';
import { buildConsole, checkPage } from './support/console.js';

const CARD_SECRET = 'whsec_console_more_0123456789abcdefghij';
const FAILING = 'test.console_always_fails';
const uid = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/** A test-only job type that always fails: one attempt, then dead. */
@Injectable()
class FailingJobs {
  @OnJob({ type: FAILING, maxAttempts: 1 })
  async fail(job: Job<{ label: string }>): Promise<void> {
    throw new Error(`planned failure of ${job.payload.label}`);
  }
}

@Module({ providers: [FailingJobs] })
class FailingJobsModule {}

/**
 * The console actions the other browser specs leave out, in Chromium against the real service
 * and database: archiving a project, the catalogue editor, the rails page, the erasure queue,
 * a dead job retried, a webhook endpoint edited, the key activity log and the environment
 * switch. Every view passes axe and is saved as a screenshot.
 */
describe('operator console: archive, catalogue, rails, queues, jobs, endpoint, activity, environment', () => {
  let t: TestApp;
  let baseUrl = '';
  let browser: BrowserSession;
  let secrets: RailSecretsFile;
  let receiver: WebhookReceiver;
  let fx: ProjectFixture;

  const page = () => browser.page;
  const http = () => t.http;
  const now = () => Math.floor(t.clock.nowMs() / 1000);
  const open = (path: string) => page().goto(`${baseUrl}/console/#${path}`);

  beforeAll(async () => {
    buildConsole();
    receiver = await startWebhookReceiver();
    secrets = new RailSecretsFile();
    t = await createTestApp(
      {
        RAIL_SECRETS_FILE: secrets.path,
        LOG_LEVEL: 'warn',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOK_SIGNING_KEY: 'console-signing-key-0123456789abcdef0123',
      },
      { extraModules: [FailingJobsModule] },
    );
    await t.app.listen(0, '127.0.0.1');
    const address = t.app.getHttpServer().address();
    if (!address || typeof address === 'string') throw new Error('the test app is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    fx = await createProjectWithApp(t, { projectId: await createProject(t, `Console more ${uid('p')}`) });
    browser = await launchBrowser();
    await page().goto(`${baseUrl}/console/`);
    await page().getByLabel('Operator token').fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
    secrets?.remove();
  });

  it('archives a project with its name typed as confirmation: its keys then answer 401', async () => {
    const name = `Console archive ${uid('a')}`;
    const doomed = await createProjectWithApp(t, { projectId: await createProject(t, name) });
    const read = () =>
      http()
        .get(`/v1/server/customers/${uid('cust')}/entitlements`)
        .set(keyHeaders(doomed, doomed.keys.skTest));
    expect((await read()).status).not.toBe(401);
    await open('/');
    await page().reload();
    const row = page().getByRole('row').filter({ hasText: doomed.projectId });
    await row.getByRole('button', { name: 'Archive' }).click();
    const dialog = page().getByRole('dialog');
    const archive = dialog.getByRole('button', { name: 'Archive project' });
    expect(await archive.isDisabled()).toBe(true);
    await checkPage(page(), 'more-project-archive');
    await dialog.getByLabel(`Type ${name} to confirm`).fill(name);
    await archive.click();
    await row.getByText('archived').waitFor();
    expect((await read()).status).toBe(401);
    await checkPage(page(), 'more-projects-archived');
  });

  it('edits the catalogue: a product added with entitlement keys is there after a reload, keys listed', async () => {
    await open(`/p/${fx.projectId}/products`);
    await page().getByRole('button', { name: 'Add product' }).click();
    const product = page().getByRole('group', { name: 'Product 1' });
    await product.getByLabel('Rail').selectOption('card_payments');
    await product.getByLabel('Product id').fill('prod_more');
    await product.getByLabel('Entitlement keys').fill('more_pro more_extra');
    await page().getByRole('button', { name: 'Save catalogue' }).click();
    await page().getByText('Catalogue saved.').waitFor();
    await page().reload();
    const reloaded = page().getByRole('group', { name: 'Product 1' });
    await reloaded.getByLabel('Product id').waitFor();
    expect(await reloaded.getByLabel('Product id').inputValue()).toBe('prod_more');
    expect(await reloaded.getByLabel('Entitlement keys').inputValue()).toBe('more_pro more_extra');
    const keys = page().locator('section[aria-labelledby="entitlement-keys"]');
    await keys.getByRole('cell', { name: 'more_pro', exact: true }).waitFor();
    await keys.getByRole('cell', { name: 'more_extra', exact: true }).waitFor();
    await checkPage(page(), 'more-products');
  });

  it("shows a rail's settings, its secrets as flags, the webhook URL and the latest notification", async () => {
    secrets.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [CARD_SECRET] } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    expect((await http().put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_more' })).status).toBe(200);
    const eventId = uid('evt');
    const subscription = {
      id: uid('sub'),
      object: 'subscription',
      customer: uid('cus'),
      status: 'active',
      cancel_at_period_end: false,
      metadata: { developerUserId: uid('user') },
      items: {
        object: 'list',
        data: [
          {
            id: uid('si'),
            object: 'subscription_item',
            current_period_end: now() + 30 * 86400,
            quantity: 1,
            price: { id: uid('price'), product: 'prod_more', unit_amount: 999, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
          },
        ],
      },
    };
    const payload = JSON.stringify({
      id: eventId,
      object: 'event',
      created: now(),
      livemode: false,
      type: 'customer.subscription.created',
      data: { object: subscription },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: CARD_SECRET, timestamp: now() });
    const notified = await http()
      .post(`/v1/webhooks/card_payments/${fx.projectId}`)
      .set({ 'Content-Type': 'application/json', 'Stripe-Signature': signature })
      .send(payload);
    expect(notified.status).toBe(200);

    await open(`/p/${fx.projectId}/rails`);
    const panel = page()
      .locator('section.card')
      .filter({ has: page().getByRole('heading', { name: /^Card payments/ }) });
    await panel.getByText(`/v1/webhooks/card_payments/${fx.projectId}`).waitFor();
    await panel.getByText(/webhook verification present/).waitFor();
    expect(await panel.getByLabel('Account id').inputValue()).toBe('acct_more');
    const row = panel.getByRole('row').filter({ hasText: eventId });
    await row.getByRole('link', { name: notified.body.serviceCustomerId }).waitFor();
    expect(await page().content()).not.toContain(CARD_SECRET);
    await checkPage(page(), 'more-rails');
  });

  it('lists a forgotten customer in the erasure queue', async () => {
    const identified = await http()
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ userId: uid('user'), anonymousId: uid('anon') });
    expect(identified.status).toBe(200);
    const customerId = identified.body.serviceCustomerId as string;
    expect((await http().post('/v1/identity/forget').set(keyHeaders(fx, fx.keys.skTest)).send({ customerId })).status).toBe(200);

    await open(`/p/${fx.projectId}/reviews`);
    await page().locator('section[aria-labelledby="erasures"]').getByRole('row').filter({ hasText: customerId }).waitFor();
    await checkPage(page(), 'more-erasures');
  });

  it('retries a dead job from the jobs page', async () => {
    const id = (await t.app.get(JobQueue).enqueue(FAILING, { label: uid('dead') }))!;
    await t.app.get(JobWorker).runDue({ types: [FAILING] });
    /** Whether the operator API lists the job among the dead letters. */
    const dead = async () => ((await http().get('/admin/v1/jobs?status=dead').set(operatorAuth())).body.data as { id: string }[]).some((job) => job.id === id);
    expect(await dead()).toBe(true);

    await open('/jobs');
    const retry = page().getByRole('button', { name: `Retry job ${id}` });
    await retry.waitFor();
    await checkPage(page(), 'more-dead-jobs');
    await retry.click();
    await page().getByText(`Job ${id} queued again.`).waitFor();
    expect(await dead()).toBe(false);
    await checkPage(page(), 'more-dead-job-retried');
    // No handler outside this app: the queued job must not be left for another test app's worker; it fails its one attempt here.
    await t.app.get(JobWorker).runDue({ types: [FAILING], ignoreSchedule: true });
    expect(await dead()).toBe(true);
  });

  it('edits a webhook endpoint: URL and description, disable and enable, secret rotated (shown once), test sent', async () => {
    const path = `/hooks/${uid('edit')}`;
    receiver.on(path, 204);
    const created = await http()
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(`/hooks/${uid('old')}`), env: 'sandbox', eventTypes: ['entitlement.granted_manually'] });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;
    const stored = async () => (await http().get(`/admin/v1/webhook-endpoints/${endpointId}`).set(operatorAuth())).body;

    await open(`/p/${fx.projectId}/webhooks/${endpointId}`);
    await page().getByLabel('Endpoint URL').fill(receiver.url(path));
    await page().getByLabel('Description').fill('Console edit check');
    await page().getByRole('button', { name: 'Save', exact: true }).click();
    await page().getByText('Saved.').waitFor();
    expect(await stored()).toEqual(expect.objectContaining({ url: receiver.url(path), description: 'Console edit check' }));

    await page().getByRole('button', { name: 'Disable' }).click();
    await page().getByRole('button', { name: 'Enable' }).waitFor();
    expect((await stored()).status).toBe('disabled');
    await checkPage(page(), 'more-webhook-disabled');
    await page().getByRole('button', { name: 'Enable' }).click();
    await page().getByRole('button', { name: 'Disable' }).waitFor();
    expect((await stored()).status).toBe('enabled');

    await page().getByRole('button', { name: 'Rotate secret' }).click();
    await page().getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page().getByRole('dialog');
    const secret = (await dialog.getByTestId('secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThan(16);
    await checkPage(page(), 'more-webhook-secret');
    const kept = await page().evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(kept).not.toContain(secret);
    await dialog.getByRole('button', { name: 'Done' }).click();
    expect(JSON.stringify(await stored())).not.toContain(secret);

    await page().getByRole('button', { name: 'Send test' }).click();
    await page().getByText('Test event queued.').waitFor();
    await checkPage(page(), 'more-webhook-edited');
  });

  it('shows created, rotated and revoked keys in the key activity log', async () => {
    const rotated = await http().post(`/admin/v1/keys/${fx.keyIds.pubTest}/rotate`).set(operatorAuth()).send({});
    expect(rotated.status).toBe(201);
    expect((await http().post(`/admin/v1/keys/${fx.keyIds.skLive}/revoke`).set(operatorAuth())).status).toBe(200);

    await open(`/p/${fx.projectId}/apps`);
    const log = page().locator('section[aria-labelledby="key-activity"]');
    for (const [keyId, action] of [
      [fx.keyIds.skTest, 'created'],
      [fx.keyIds.pubTest, 'rotated'],
      [fx.keyIds.skLive, 'revoked'],
    ]) {
      await log.getByRole('row').filter({ hasText: keyId }).filter({ hasText: action }).first().waitFor();
    }
    await checkPage(page(), 'more-key-activity');
  });

  it('switches to production: the customers search then finds production customers only', async () => {
    const userId = uid('prod_user');
    // A second app of the project: its production key is still active (the fixture's was revoked above).
    const live = await createProjectWithApp(t, { projectId: fx.projectId });
    const identified = await http()
      .post('/v1/identify')
      .set(keyHeaders(live, live.keys.skLive))
      .send({ userId, anonymousId: uid('anon') });
    expect(identified.status).toBe(200);
    const customerId = identified.body.serviceCustomerId as string;

    await open(`/p/${fx.projectId}/customers`);
    const search = async () => {
      await page().getByLabel('Find a customer').fill(userId);
      await page().getByRole('button', { name: 'Search' }).click();
    };
    await search();
    await page().getByText(`No customer matches “${userId}” in sandbox.`).waitFor();
    await checkPage(page(), 'more-customers-sandbox');

    await page().getByRole('radio', { name: 'production' }).check();
    await search();
    await page().getByRole('link', { name: customerId }).waitFor();
    await checkPage(page(), 'more-customers-production');
    await page().getByRole('radio', { name: 'sandbox' }).check();
  });
});
