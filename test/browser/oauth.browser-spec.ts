import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import AxeBuilder from '@axe-core/playwright';
import { TEST_OPERATOR_TOKEN } from '../support/test-app.js';
import { launchBrowser, screenshot, serveTestApp, type BrowserSession, type ServedApp } from './support/browser.js';

/**
 * Connector sign-in driven as the public CLI drives it: register with a loopback redirect,
 * open authorize in Chromium, sign in to the console, consent, receive the code on the
 * loopback server, exchange it with the PKCE verifier (JSON, as the CLI posts), read with the
 * access token, refresh, revoke, and the token is refused.
 */
describe('oauth in the browser: the CLI login flow', () => {
  let served: ServedApp;
  let browser: BrowserSession;
  let loopback: Server;
  let redirectUri: string;
  const received: URL[] = [];

  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${served.baseUrl}${path}`, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    api(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    served = await serveTestApp();
    loopback = createServer((req, res) => {
      received.push(new URL(req.url ?? '/', redirectUri));
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Signed in</title><p>You can close this tab.</p>');
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/callback`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => loopback?.close(resolve));
    await served?.t.close();
  });

  it('register, sign in, consent, exchange, read, refresh, revoke', async () => {
    const operator = { Authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };
    const project = await postJson('/admin/v1/projects', { name: 'Browser OAuth' }, operator);
    const workspace = await postJson('/admin/v1/workspaces', { name: 'CLI workspace' }, operator);
    expect((await api(`/admin/v1/workspaces/${workspace.body.id}/projects/${project.body.id}`, { method: 'POST', headers: operator })).status).toBe(200);

    const registered = await postJson('/oauth/register', { client_name: 'Crossdeck CLI', redirect_uris: [redirectUri], application_type: 'native' });
    expect(registered.status).toBe(201);
    const clientId = registered.body.client_id as string;
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('hex');
    const authorize = new URL(`${served.baseUrl}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state,
      scope: 'reporting:aggregate revenue:read reporting:identity',
    })) {
      authorize.searchParams.set(name, value);
    }

    // No session: the console's sign-in, carrying the request to come back to.
    const page = browser.page;
    await page.goto(authorize.toString());
    const signInUrl = new URL(page.url());
    expect(signInUrl.pathname).toBe('/console/');
    const next = signInUrl.searchParams.get('next')!;
    expect(next.startsWith('/oauth/authorize?')).toBe(true);
    // Sign in through the page's own request context (its cookies are the browser's).
    const session = await page.request.post(`${served.baseUrl}/console/api/session`, { data: { token: TEST_OPERATOR_TOKEN } });
    expect(session.status()).toBe(204);
    await page.goto(`${served.baseUrl}${next}`);

    // The consent page: the client, the workspace picker, identity scopes unticked.
    await page.getByRole('heading', { name: /Connect Crossdeck CLI/ }).waitFor();
    expect(await page.locator('select#workspace option').allTextContents()).toContain(`CLI workspace (${workspace.body.id})`);
    await page.selectOption('select#workspace', workspace.body.id);
    expect(await page.isChecked('input[value="reporting:aggregate"]')).toBe(true);
    expect(await page.isChecked('input[value="reporting:identity"]')).toBe(false);
    const axe = await new AxeBuilder({ page }).analyze();
    expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await screenshot(page, 'oauth-consent');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.toString().startsWith(redirectUri));
    const callback = received.find((url) => url.pathname === '/callback')!;
    expect(callback.searchParams.get('state')).toBe(state);
    const code = callback.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const tokens = await postJson('/oauth/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: redirectUri,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.access_token).toMatch(/^cd_wk_/);
    expect(tokens.body.scope).toBe('reporting:aggregate revenue:read');
    const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
    const projects = await api('/v1/workspace/projects', bearer(tokens.body.access_token));
    expect(projects.status).toBe(200);
    expect(projects.body.data.projects.map((p: { id: string }) => p.id)).toEqual([project.body.id]);

    const refreshed = await postJson('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    expect((await api('/v1/workspace/projects', bearer(refreshed.body.access_token))).status).toBe(200);

    expect((await postJson('/oauth/revoke', { token: refreshed.body.refresh_token, client_id: clientId })).status).toBe(200);
    expect((await api('/v1/workspace/projects', bearer(refreshed.body.access_token))).status).toBe(401);
  });
});
