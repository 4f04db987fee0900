import { randomBytes, randomUUID } from 'node:crypto';
import { createProject, createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { TEST_OPERATOR_TOKEN, createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';
import { launchBrowser, type BrowserSession } from './support/browser.js';
import { buildConsole, checkPage, settled } from './support/console.js';

const uid = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
type Env = 'sandbox' | 'production';

/**
 * The console's care, in Chromium against the real service and database: irreversible actions
 * ask first (merge approve and dismiss, deleting a webhook endpoint) in a dialog that keeps
 * focus, closes on Escape and names what it acts on; pages follow an environment switch without
 * errors; every page has its own title; the icon and compressed assets are served; the dark
 * theme; the sandbox banner in a landmark; and axe finds nothing, of any impact, on every page
 * in both environments.
 */
describe('operator console: confirmations, environment switch, titles, icon, dark theme, axe everywhere', () => {
  let t: TestApp;
  let baseUrl = '';
  let browser: BrowserSession;
  let receiver: WebhookReceiver;
  let fx: ProjectFixture;
  const projectName = `Console care ${uid('p')}`;
  const customers: Record<Env, string> = { sandbox: '', production: '' };
  const endpoints: Record<Env, string> = { sandbox: '', production: '' };
  const fingerprints: Record<Env, string> = { sandbox: randomBytes(4).toString('hex'), production: randomBytes(4).toString('hex') };

  const page = () => browser.page;
  const http = () => t.http;
  const open = (path: string) => page().goto(`${baseUrl}/console/#${path}`);
  const hash = () => page().evaluate<string>('location.hash');
  const switchTo = async (env: Env) => {
    await page().getByRole('radio', { name: env }).check();
    await page().getByRole('radio', { name: env, checked: true }).waitFor();
  };
  /** Every element with role=alert that appears from now on, recorded in the page. */
  const recordAlerts = () =>
    page().evaluate(() => {
      const g = globalThis as any;
      g.alertsSeen = [];
      const seen = () => {
        for (const node of g.document.querySelectorAll('[role="alert"]')) g.alertsSeen.push(node.textContent);
      };
      new g.MutationObserver(seen).observe(g.document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
  const alertsSeen = () => page().evaluate<string[]>('globalThis.alertsSeen');
  const key = (env: Env) => (env === 'sandbox' ? fx.keys.skTest : fx.keys.skLive);
  const identify = async (env: Env, userId = uid('user'), anonymousId = uid('anon')) => {
    const res = await http()
      .post('/v1/identify')
      .set(keyHeaders(fx, env === 'sandbox' ? fx.keys.pubTest : fx.keys.pubLive))
      .send({ userId, anonymousId });
    expect(res.status).toBe(200);
    return res.body as { serviceCustomerId: string; mergePending?: boolean };
  };
  /** Two customers that one identify call claims for the same user: a merge review. */
  const pendingReview = async () => {
    const [user, anonA, other, anonB] = [uid('ua'), uid('anon'), uid('ub'), uid('anon')];
    await identify('sandbox', user, anonA);
    await identify('sandbox', other, anonB);
    expect((await identify('sandbox', user, anonB)).mergePending).toBe(true);
    return user;
  };

  beforeAll(async () => {
    buildConsole();
    receiver = await startWebhookReceiver();
    t = await createTestApp({ LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'console-signing-key-0123456789abcdef0123' });
    await t.app.listen(0, '127.0.0.1');
    const address = t.app.getHttpServer().address();
    if (!address || typeof address === 'string') throw new Error('the test app is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    fx = await createProjectWithApp(t, { projectId: await createProject(t, projectName) });
    for (const env of ['sandbox', 'production'] as const) {
      customers[env] = (await identify(env)).serviceCustomerId;
      const endpoint = await http()
        .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
        .set(operatorAuth())
        .send({ url: receiver.url(`/hooks/${uid(env)}`), env, eventTypes: ['entitlement.granted_manually'] });
      expect(endpoint.status).toBe(201);
      endpoints[env] = endpoint.body.id;
      const sent = await http()
        .post('/v1/events')
        .set({ Authorization: `Bearer ${key(env)}` })
        .send({
          events: [
            {
              name: 'error.unhandled',
              eventId: `err_${randomUUID()}`,
              timestamp: t.clock.nowMs(),
              level: 'error',
              anonymousId: uid('anon'),
              properties: { fingerprint: fingerprints[env], level: 'error', errorType: 'TypeError', message: `broken in ${env}` },
            },
          ],
        });
      expect(sent.status).toBe(202);
    }
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
  });

  it('asks before approving or dismissing a merge: focus stays in the dialog, Escape cancels, then it runs once confirmed', async () => {
    const approved = await pendingReview();
    const dismissed = await pendingReview();
    await open(`/p/${fx.projectId}/reviews`);
    const approve = page().getByRole('button', { name: `Approve merge of ${approved}` });
    await approve.click();
    const dialog = page().getByRole('dialog', { name: `Merge the customers of ${approved}?` });
    await dialog.getByText('This cannot be undone.').waitFor();
    await checkPage(page(), 'care-merge-approve-dialog');
    // Focus is trapped: tabbing never leaves the dialog.
    for (let i = 0; i < 6; i++) {
      await page().keyboard.press('Tab');
      expect(await page().evaluate<boolean>("Boolean(document.activeElement && document.activeElement.closest('dialog'))")).toBe(true);
    }
    await page().keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await page().evaluate<string | null>("document.activeElement.getAttribute('aria-label')")).toBe(`Approve merge of ${approved}`);
    expect(
      await page()
        .getByText(/approved\./)
        .count(),
    ).toBe(0);
    await approve.waitFor();

    await approve.click();
    await dialog.getByRole('button', { name: 'Approve merge' }).click();
    await page()
      .getByText(/approved\./)
      .waitFor();
    await approve.waitFor({ state: 'detached' });

    const dismiss = page().getByRole('button', { name: `Dismiss merge of ${dismissed}` });
    await dismiss.click();
    const asked = page().getByRole('dialog', { name: `Dismiss the conflict of ${dismissed}?` });
    await asked.getByRole('button', { name: 'Cancel' }).click();
    await asked.waitFor({ state: 'detached' });
    await dismiss.click();
    await asked.getByRole('button', { name: 'Dismiss conflict' }).click();
    await page()
      .getByText(/dismissed\./)
      .waitFor();
    await dismiss.waitFor({ state: 'detached' });
    await checkPage(page(), 'care-merge-done');
  });

  it('asks before deleting a webhook endpoint; once confirmed it is gone and the list says so', async () => {
    const url = receiver.url(`/hooks/${uid('doomed')}`);
    const created = await http()
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url, env: 'sandbox', eventTypes: ['entitlement.granted_manually'] });
    expect(created.status).toBe(201);
    await open(`/p/${fx.projectId}/webhooks/${created.body.id}`);
    const remove = page().getByRole('button', { name: 'Delete endpoint' });
    await remove.click();
    const dialog = page().getByRole('dialog', { name: `Delete the endpoint ${url}?` });
    await dialog.waitFor();
    await checkPage(page(), 'care-endpoint-delete-dialog');
    await page().keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await http().get(`/admin/v1/webhook-endpoints/${created.body.id}`).set(operatorAuth())).status).toBe(200);

    await remove.click();
    await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await page().getByText(`Endpoint ${url} deleted.`).waitFor();
    expect(await hash()).toBe(`#/p/${fx.projectId}/webhooks`);
    expect((await http().get(`/admin/v1/webhook-endpoints/${created.body.id}`).set(operatorAuth())).status).toBe(404);
    await checkPage(page(), 'care-endpoint-deleted');
  });

  it('follows an environment switch on a customer, an issue and an endpoint page: the list opens, no error is shown', async () => {
    const cases: [string, string, string][] = [
      [`/p/${fx.projectId}/customers/${customers.sandbox}`, `#/p/${fx.projectId}/customers`, `Customer ${customers.sandbox} is not in production`],
      [`/p/${fx.projectId}/errors/${fingerprints.sandbox}`, `#/p/${fx.projectId}/errors`, `Issue ${fingerprints.sandbox} is not in production`],
      [`/p/${fx.projectId}/webhooks/${endpoints.sandbox}`, `#/p/${fx.projectId}/webhooks`, `Endpoint ${endpoints.sandbox} is not in production`],
    ];
    for (const [path, list, notice] of cases) {
      await switchTo('sandbox');
      await open(path);
      expect(await hash()).toBe(`#${path}`);
      await settled(page());
      await recordAlerts();
      await switchTo('production');
      await page().getByText(notice).waitFor();
      expect(await hash()).toBe(list);
      await settled(page());
      expect(await alertsSeen()).toEqual([]);
      expect(await page().getByRole('alert').count()).toBe(0);
      await checkPage(page(), `care-env-switch-${list.split('/').pop()}`);
    }

    // The customer's form is never live while the customer is not shown.
    await open(`/p/${fx.projectId}/customers/${customers.production}`);
    await page().getByRole('heading', { name: 'Grant or revoke (production)' }).waitFor();
    await recordAlerts();
    await switchTo('sandbox');
    await page().getByText(`Customer ${customers.production} is not in sandbox`).waitFor();
    expect(await page().getByRole('button', { name: 'Grant', exact: true }).count()).toBe(0);
    expect(await alertsSeen()).toEqual([]);
  });

  it('gives every page its own title', async () => {
    const p = `/p/${fx.projectId}`;
    const titles: [string, string][] = [
      ['/', 'Projects · Console'],
      ['/workspaces', 'Workspaces · Console'],
      ['/jobs', 'Dead jobs · Console'],
      [`${p}/overview`, `Overview · ${projectName} · Console`],
      [`${p}/apps`, `Apps and keys · ${projectName} · Console`],
      [`${p}/apps/${fx.appId}`, `web app · Apps · ${projectName} · Console`],
      [`${p}/customers`, `Customers · ${projectName} · Console`],
      [`${p}/customers/${customers.sandbox}`, `Customer ${customers.sandbox} · ${projectName} · Console`],
      [`${p}/products`, `Products · ${projectName} · Console`],
      [`${p}/rails`, `Rails · ${projectName} · Console`],
      [`${p}/reviews`, `Review queues · ${projectName} · Console`],
      [`${p}/errors`, `Errors · ${projectName} · Console`],
      [`${p}/errors/${fingerprints.sandbox}`, `TypeError: broken in sandbox · Errors · ${projectName} · Console`],
      [`${p}/webhooks`, `Webhooks · ${projectName} · Console`],
      [`${p}/webhooks/${endpoints.sandbox}`, `Webhook endpoint · Webhooks · ${projectName} · Console`],
      ['/nowhere', 'No such page · Console'],
    ];
    await open('/');
    await switchTo('sandbox');
    const seen: [string, string][] = [];
    for (const [path, title] of titles) {
      await open(path);
      await page()
        .waitForFunction((want) => (globalThis as any).document.title === want, title, { timeout: 5000 })
        .catch(() => undefined);
      seen.push([path, await page().title()]);
    }
    expect(seen).toEqual(titles);
  });

  it('serves the icon (linked from the page, and at favicon.ico) and the build’s brotli or gzip file of each asset by Accept-Encoding', async () => {
    const encodings: Record<string, string | undefined> = {};
    const listen = (response: import('playwright-core').Response) => {
      if (/\/console\/assets\/.+\.(js|css)$/.test(response.url())) encodings[response.url().replace(/^.*\./, '')] = response.headers()['content-encoding'];
    };
    // A route turns the browser's HTTP cache off: the assets come over the network, as on a first visit.
    await page().route('**/console/assets/**', (route) => route.continue());
    page().on('response', listen);
    await page().goto(`${baseUrl}/console/`, { waitUntil: 'load' });
    await page().reload({ waitUntil: 'load' });
    page().off('response', listen);
    await page().unrouteAll();
    await page().getByRole('heading', { level: 1 }).first().waitFor();
    expect(encodings).toEqual({ js: 'br', css: 'br' });
    // A client without brotli gets the build's gzip file of the same asset; one with neither, the plain file.
    const script = await page().locator('script[type="module"][src]').first().getAttribute('src');
    for (const [accepted, sent] of [
      ['gzip', 'gzip'],
      ['identity', undefined],
    ] as const) {
      const asset = await page().request.get(`${baseUrl}${script!}`, { headers: { 'Accept-Encoding': accepted } });
      expect([accepted, asset.status(), asset.headers()['content-encoding']]).toEqual([accepted, 200, sent]);
      expect(asset.headers()['vary']).toMatch(/Accept-Encoding/i);
    }

    const href = await page().locator('link[rel="icon"]').getAttribute('href');
    expect(href).toBe('/console/favicon.svg');
    for (const path of [href!, '/console/favicon.ico']) {
      const icon = await page().request.get(`${baseUrl}${path}`);
      expect([path, icon.status(), icon.headers()['content-type']]).toEqual([path, 200, 'image/svg+xml']);
      expect((await icon.text()).startsWith('<svg')).toBe(true);
    }
  });

  it('keeps the sandbox banner in a labelled region', async () => {
    await open('/');
    await switchTo('sandbox');
    const banner = page().getByRole('region', { name: 'Test mode' });
    await banner.getByText('Sandbox: test mode').waitFor();
    await switchTo('production');
    await banner.waitFor({ state: 'detached' });
  });

  // Nine views with axe and a screenshot each: longer than one test's default time.
  it('follows the system dark setting: dark colours, and axe finds nothing', async () => {
    await page().emulateMedia({ colorScheme: 'dark' });
    try {
      await open('/');
      await switchTo('sandbox');
      expect(await page().evaluate<string>('getComputedStyle(document.documentElement).backgroundColor')).toBe('rgb(13, 17, 23)');
      const p = `/p/${fx.projectId}`;
      for (const [path, name] of [
        ['/', 'projects'],
        [`${p}/apps/${fx.appId}`, 'app'],
        [`${p}/customers/${customers.sandbox}`, 'customer'],
        [`${p}/reviews`, 'reviews'],
        [`${p}/errors/${fingerprints.sandbox}`, 'error-issue'],
        [`${p}/webhooks/${endpoints.sandbox}`, 'webhook-endpoint'],
        [`${p}/overview`, 'overview'],
      ]) {
        await open(path);
        await checkPage(page(), `care-dark-${name}`);
      }
      // An alert, a dialog and the validation errors in dark colours too.
      await open(`${p}/customers/${customers.sandbox}`);
      await page().getByRole('button', { name: 'Grant', exact: true }).click();
      await page().getByRole('alert').first().waitFor();
      await checkPage(page(), 'care-dark-form-errors');
      await open(`${p}/webhooks/${endpoints.sandbox}`);
      await page().getByRole('button', { name: 'Delete endpoint' }).click();
      await page().getByRole('dialog').waitFor();
      await checkPage(page(), 'care-dark-dialog');
      await page().keyboard.press('Escape');
    } finally {
      await page().emulateMedia({ colorScheme: 'light' });
    }
  }, 180_000);

  // Thirty pages, each with axe and a full-page screenshot: longer than one test's default time.
  it('passes axe with no violation of any impact on every page, in sandbox and in production', async () => {
    const p = `/p/${fx.projectId}`;
    for (const env of ['sandbox', 'production'] as const) {
      await open('/');
      await switchTo(env);
      for (const [path, name] of [
        ['/', 'projects'],
        ['/workspaces', 'workspaces'],
        ['/jobs', 'jobs'],
        [`${p}/overview`, 'overview'],
        [`${p}/apps`, 'apps'],
        [`${p}/apps/${fx.appId}`, 'app'],
        [`${p}/customers`, 'customers'],
        [`${p}/customers/${customers[env]}`, 'customer'],
        [`${p}/products`, 'products'],
        [`${p}/rails`, 'rails'],
        [`${p}/reviews`, 'reviews'],
        [`${p}/errors`, 'errors'],
        [`${p}/errors/${fingerprints[env]}`, 'error-issue'],
        [`${p}/webhooks`, 'webhooks'],
        [`${p}/webhooks/${endpoints[env]}`, 'webhook-endpoint'],
      ]) {
        await open(path);
        await checkPage(page(), `care-${env}-${name}`);
      }
    }
    await open('/');
    await switchTo('sandbox');
  }, 360_000);
});
