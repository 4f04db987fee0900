import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import Stripe from 'stripe';
import ts from 'typescript';
import { RailSecrets } from '#rails';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { TEST_OPERATOR_TOKEN, operatorAuth } from '../support/test-app.js';
import { launchBrowser, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';
import { checkPage, buildConsole, publishScreenshot } from './support/console.js';

const CARD_SECRET = 'whsec_console_0123456789abcdefghijkl';
const uid = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

/**
 * The operator console in Chromium against the real service and database: a person signs in,
 * creates a project and an app, handles keys, finds a paying customer, grants and revokes,
 * approves a merge review, reads a symbolicated error, adds a webhook endpoint and signs out.
 * Every page passes axe (no serious or critical violation), at 1280 px and at 390 px.
 */
describe('operator console', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let secrets: RailSecretsFile;
  let receiver: Server;
  let projectId = '';
  let appId = '';
  let secretKey = '';
  let publishableKey = '';
  const userId = uid('user');
  const pages: [string, string][] = [];

  const page = () => browser.page;
  const http = () => served.t.http;
  const now = () => Math.floor(served.t.clock.nowMs() / 1000);
  const open = (path: string) => page().goto(`${served.baseUrl}/console/#${path}`);
  /** Checks the page shown (axe, width, screenshot) and remembers it for the 390-px pass. */
  const check = async (name: string) => {
    const hash = new URL(page().url()).hash.replace(/^#/, '');
    if (hash && !pages.some(([path]) => path === hash)) pages.push([hash, name]);
    return checkPage(page(), name);
  };

  beforeAll(async () => {
    buildConsole();
    secrets = new RailSecretsFile();
    receiver = createServer((_req, res) => res.writeHead(200).end('ok'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    served = await serveTestApp({
      RAIL_SECRETS_FILE: secrets.path,
      LOG_LEVEL: 'warn',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_SIGNING_KEY: 'console-signing-key-0123456789abcdef0123',
    });
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: served.baseUrl });
  });
  afterAll(async () => {
    await browser?.close();
    await served?.t.close();
    secrets?.remove();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('signs in: a wrong token is answered next to the field, the right one opens the projects', async () => {
    await page().goto(`${served.baseUrl}/console/`);
    const token = page().getByLabel('Operator token');
    await token.waitFor();
    await checkPage(page(), 'sign-in');
    await token.fill('not-the-token');
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('alert').filter({ hasText: 'not valid' }).waitFor();
    expect(await token.getAttribute('aria-describedby')).toBeTruthy();
    await token.fill(TEST_OPERATOR_TOKEN);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page().getByText('Sandbox: test mode').waitFor();
    await check('projects');
  });

  it('creates a project and a web app, and copies a secret key shown once', async () => {
    await page().getByRole('button', { name: 'Create project' }).click();
    await page().getByRole('alert').filter({ hasText: 'name is required' }).waitFor();
    await page().getByLabel('Project name').fill('Console project');
    await page().getByRole('button', { name: 'Create project' }).click();
    await page().getByRole('heading', { name: 'Apps and keys' }).waitFor();
    projectId = /#\/p\/([^/]+)\/apps/.exec(page().url())![1];
    expect(projectId).toMatch(/^proj_/);

    await page().getByLabel('App name').fill('Console web app');
    await page().getByLabel('Allowed origins').fill('https://app.example.com');
    await page().getByRole('button', { name: 'Create app' }).click();
    const dialog = page().getByRole('dialog');
    await dialog.waitFor();
    await checkPage(page(), 'app-created-secret-dialog');
    const shown = dialog.locator('.secret-row').filter({ hasText: 'secret sandbox' });
    secretKey = (await shown.getByTestId('secret').textContent())!.trim();
    expect(secretKey).toMatch(/_test_/);
    await shown.getByRole('button', { name: 'Copy secret sandbox' }).click();
    await shown.getByText('Copied.').waitFor();
    expect(await page().evaluate<string>('navigator.clipboard.readText()')).toBe(secretKey);
    // Shown once: never written to browser storage.
    const stored = await page().evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(stored).not.toContain(secretKey);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page().getByRole('link', { name: 'Console web app' }).waitFor();
    await check('apps');

    // The copied key works against the public API.
    const entitlements = await http()
      .get(`/v1/server/customers/${uid('cust')}/entitlements`)
      .set({ Authorization: `Bearer ${secretKey}` });
    expect(entitlements.status).not.toBe(401);
  });

  it('rotates a key (the new one shown once) and revokes it with a typed confirmation', async () => {
    await page().getByRole('link', { name: 'Console web app' }).click();
    await page().getByRole('heading', { name: 'Keys' }).waitFor();
    appId = /apps\/(app_[^/?]+)/.exec(page().url())![1];
    const app = await http().get(`/admin/v1/apps/${appId}`).set(operatorAuth());
    publishableKey = app.body.keys.find((k: any) => k.kind === 'publishable' && k.env === 'sandbox').key;
    const last4 = secretKey.slice(-4);
    await check('app');

    await page()
      .getByRole('button', { name: `Rotate secret sandbox key ending ${last4}` })
      .click();
    await page().getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    const shown = page().getByRole('dialog').getByTestId('secret');
    await shown.waitFor();
    const rotated = (await shown.textContent())!.trim();
    expect(rotated).not.toBe(secretKey);
    await page().getByRole('dialog').getByRole('button', { name: 'Done' }).click();
    await page().getByText('rotated_out').first().waitFor();

    const rotatedId = (await http().get(`/admin/v1/apps/${appId}`).set(operatorAuth())).body.keys.find(
      (k: any) => k.kind === 'secret' && k.env === 'sandbox' && k.status === 'active',
    ).id;
    await page()
      .getByRole('button', { name: `Revoke secret sandbox key ending ${rotated.slice(-4)}` })
      .click();
    const confirm = page().getByRole('dialog');
    const revoke = confirm.getByRole('button', { name: 'Revoke key' });
    expect(await revoke.isDisabled()).toBe(true);
    await confirm.getByLabel(`Type ${rotatedId} to confirm`).fill(rotatedId);
    await revoke.click();
    await page().getByText('revoked', { exact: true }).waitFor();
    const refused = await http()
      .get(`/v1/server/customers/${uid('cust')}/entitlements`)
      .set({ Authorization: `Bearer ${rotated}` });
    expect(refused.status).toBe(401);
  });

  it('finds a customer by user id after a card payment, reads the timeline, grants and revokes with a reason', async () => {
    secrets.write({ projects: { [projectId]: { card_payments: { webhookSecrets: [CARD_SECRET] } } } });
    served.t.app.get(RailSecrets).reloadIfChanged();
    expect((await http().put(`/admin/v1/projects/${projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_console' })).status).toBe(200);
    const catalogue = { products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }] };
    expect((await http().put(`/admin/v1/projects/${projectId}/products`).set(operatorAuth()).send(catalogue)).status).toBe(200);
    const subscription = {
      id: uid('sub'),
      object: 'subscription',
      customer: uid('cus'),
      status: 'active',
      cancel_at_period_end: false,
      metadata: { developerUserId: userId },
      items: {
        object: 'list',
        data: [
          {
            id: uid('si'),
            object: 'subscription_item',
            current_period_end: now() + 30 * 86400,
            quantity: 1,
            price: { id: uid('price'), product: 'prod_pro', unit_amount: 1299, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
          },
        ],
      },
    };
    const payload = JSON.stringify({
      id: uid('evt'),
      object: 'event',
      api_version: '2025-03-31.basil',
      created: now(),
      livemode: false,
      type: 'customer.subscription.created',
      data: { object: subscription },
    });
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: CARD_SECRET, timestamp: now() });
    const notified = await http()
      .post(`/v1/webhooks/card_payments/${projectId}`)
      .set({ 'Content-Type': 'application/json', 'Stripe-Signature': signature })
      .send(payload);
    expect(notified.status).toBe(200);
    const customerId = notified.body.serviceCustomerId as string;

    await open(`/p/${projectId}/customers`);
    await page().getByLabel('Find a customer').fill(userId);
    await page().getByRole('button', { name: 'Search' }).click();
    await page().getByRole('link', { name: customerId }).click();
    await page().getByRole('heading', { name: 'Timeline' }).waitFor();
    await page().getByRole('cell', { name: 'pro', exact: true }).first().waitFor();
    await page().locator('.timeline li').first().waitFor();
    await check('customer');

    await page().getByLabel('Entitlement key').fill('support_credit');
    await page().getByLabel('Reason').fill('too short');
    await page().getByRole('button', { name: 'Grant', exact: true }).click();
    const reasonError = page().getByRole('alert').filter({ hasText: 'reason must be 20 to 500 characters' });
    await reasonError.waitFor();
    await page().getByLabel('Reason').fill('Goodwill credit after the checkout outage');
    await page().getByRole('button', { name: 'Grant', exact: true }).click();
    await page().getByText('Granted support_credit in sandbox.').waitFor();
    await page().getByLabel('Action').selectOption('revoke');
    await page().getByLabel('Entitlement key').fill('support_credit');
    await page().getByLabel('Reason').fill('Credit given by mistake');
    await page().getByRole('button', { name: 'Revoke', exact: true }).click();
    // A revoke ends the entitlement at once: confirmed first.
    await page()
      .getByRole('dialog', { name: `Revoke support_credit from ${customerId} in sandbox?` })
      .getByRole('button', { name: 'Revoke entitlement' })
      .click();
    await page().getByText('Revoked support_credit in sandbox.').waitFor();
    // Newest first: the revoke heads the timeline, with its reason.
    await page().locator('.timeline li').first().filter({ hasText: 'Credit given by mistake' }).waitFor();
  });

  it('approves a merge review once confirmed', async () => {
    const identify = (body: Record<string, string>) =>
      http()
        .post('/v1/identify')
        .set({ Authorization: `Bearer ${publishableKey}`, Origin: 'https://app.example.com' })
        .send(body);
    const [userA, anonA, userB, anonB] = [uid('ua'), uid('anon'), uid('ub'), uid('anon')];
    await identify({ userId: userA, anonymousId: anonA });
    await identify({ userId: userB, anonymousId: anonB });
    expect((await identify({ userId: userA, anonymousId: anonB })).body.mergePending).toBe(true);

    await open(`/p/${projectId}/reviews`);
    await page()
      .getByRole('button', { name: `Approve merge of ${userA}` })
      .click();
    await page().getByRole('dialog').getByRole('button', { name: 'Approve merge' }).click();
    await page()
      .getByText(/approved\./)
      .waitFor();
    await check('reviews');
  });

  it('opens an error issue with its symbolicated frames', async () => {
    const source = [
      'export function greetUser(name: string): string {',
      '  const message: string = `hello ${name}`;',
      '  throw new Error(message);',
      '}',
      '',
    ].join('\n');
    const compiled = ts.transpileModule(source, {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, sourceMap: true },
      fileName: 'src/greet.ts',
    });
    const fileUrl = 'app:///dist/greet.js';
    const map = { ...JSON.parse(compiled.sourceMapText!), sources: ['src/greet.ts'], sourcesContent: [source] };
    const release = `1.0.${randomUUID().slice(0, 8)}`;
    const sk = secretKey; // rotated out, still valid during its grace period
    const upload = await http()
      .post('/v1/releases/sourcemaps')
      .set({ Authorization: `Bearer ${sk}` })
      .send({ release, environment: 'sandbox', files: [{ fileUrl, sourceMap: Buffer.from(JSON.stringify(map)).toString('base64') }] });
    expect(upload.body.uploaded).toBe(1);
    const exports: Record<string, (name: string) => string> = {};
    vm.runInNewContext(compiled.outputText, { exports }, { filename: fileUrl });
    let frames: unknown[] = [];
    try {
      exports.greetUser('world');
    } catch (err) {
      frames = ((err as Error).stack ?? '')
        .split('\n')
        .map((line) => /at (\S+) \((.+):(\d+):(\d+)\)/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null && m[2] === fileUrl)
        .map((m) => ({ function: m[1], filename: m[2], lineno: Number(m[3]), colno: Number(m[4]), in_app: true }));
    }
    const fingerprint = createHash('sha256').update(release).digest('hex').slice(0, 8); // 8 hex characters
    const sent = await http()
      .post('/v1/events')
      .set({ Authorization: `Bearer ${sk}` })
      .send({
        events: [
          {
            name: 'error.unhandled',
            eventId: `err_${randomUUID()}`,
            timestamp: served.t.clock.nowMs(),
            level: 'error',
            anonymousId: uid('anon'),
            properties: { fingerprint, level: 'error', errorType: 'Error', message: 'hello world', release, frames },
          },
        ],
      });
    expect(sent.status).toBe(202);

    await open(`/p/${projectId}/errors`);
    await page().getByRole('link', { name: 'Error: hello world' }).click();
    await page().getByText('src/greet.ts:3:9').waitFor();
    await page().getByText('throw new Error(message);').waitFor();
    await check('error-issue');
  });

  it('creates a webhook endpoint (its secret shown once)', async () => {
    await open(`/p/${projectId}/webhooks`);
    const { port } = receiver.address() as AddressInfo;
    const hookUrl = `http://127.0.0.1:${port}/hooks`;
    await page().getByLabel('Endpoint URL').fill(hookUrl);
    await page().getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page().getByRole('dialog');
    await dialog.getByTestId('secret').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await check('webhooks');
    await page().getByRole('link', { name: hookUrl }).click();
    await page().getByRole('button', { name: 'Send test' }).click();
    await page().getByText('Test event queued.').waitFor();
    await check('webhook-endpoint');
  });

  it('every other page passes axe; the overview is the README picture', async () => {
    for (const [path, name] of [
      [`/p/${projectId}/products`, 'products'],
      [`/p/${projectId}/rails`, 'rails'],
      ['/jobs', 'jobs'],
      ['/workspaces', 'workspaces'],
      [`/p/${projectId}/overview`, 'overview'],
    ]) {
      await open(path);
      const shot = await check(name);
      if (name === 'overview') publishScreenshot(shot);
    }
  });

  // Every page again, each with axe and a full-page screenshot: longer than one test's default time.
  it('every page is usable 390 px wide', async () => {
    await page().setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of pages) {
      await open(path);
      await page().reload();
      await page().getByRole('radio', { name: 'production' }).waitFor();
      await checkPage(page(), `390-${name}`);
    }
    await page().setViewportSize({ width: 1280, height: 800 });
  }, 240_000);

  it('signs out', async () => {
    await page().getByRole('button', { name: 'Sign out' }).click();
    await page().getByLabel('Operator token').waitFor();
    await page().setViewportSize({ width: 390, height: 844 });
    await checkPage(page(), '390-sign-in');
    const session = await page().evaluate<number>("fetch('/console/api/session').then((r) => r.status)");
    expect(session).toBe(401);
  });
});
