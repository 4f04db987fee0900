import { createHash, randomBytes } from 'node:crypto';
import { createProjectWithApp, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

/**
 * Connector sign-in (OAuth 2.1 with PKCE), sent as the public CLI sends it (JSON bodies):
 * registration, the consent behind the console session, the code exchange, refresh rotation,
 * reuse revoking the family and its workspace keys, and RFC 7009 revocation.
 */

const REDIRECT = 'http://127.0.0.1:49152/callback';
const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');
const cli = (token: string) => ({ Authorization: `Bearer ${token}`, Accept: 'application/json' });

describe('oauth: connector sign-in', () => {
  let t: TestApp;
  let project: ProjectFixture;
  let workspaceId: string;
  let cookie: string;

  beforeAll(async () => {
    t = await createTestApp();
    project = await createProjectWithApp(t);
    workspaceId = (await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Connector' })).body.id;
    await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${project.projectId}`).set(operatorAuth());
    const session = await t.http.post('/console/api/session').send({ token: t.config.operatorToken });
    cookie = ([] as string[]).concat(session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
  });
  afterAll(async () => t.close());

  async function register(redirectUris: unknown = [REDIRECT]) {
    return t.http
      .post('/oauth/register')
      .set('Content-Type', 'application/json')
      .send({ client_name: 'Crossdeck CLI', redirect_uris: redirectUris, application_type: 'native' });
  }

  function authorizeUrl(clientId: string, challenge: string, state = 'st_123', scope = 'reporting:aggregate revenue:read') {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      scope,
    });
    return `/oauth/authorize?${q}`;
  }

  /** Opens the consent page with the session and submits it; the redirect's parameters. */
  async function consent(clientId: string, challenge: string, decision = 'approve', scopes = ['reporting:aggregate', 'revenue:read']) {
    const page = await t.http.get(authorizeUrl(clientId, challenge)).set('Cookie', cookie);
    expect(page.status).toBe(200);
    const fields = Object.fromEntries(
      [...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&amp;/g, '&')]),
    );
    const form = new URLSearchParams({ ...fields, workspace: workspaceId, decision });
    for (const scope of scopes) form.append('scope', scope);
    const res = await t.http.post('/oauth/authorize').set('Cookie', cookie).set('Content-Type', 'application/x-www-form-urlencoded').send(form.toString());
    expect(res.status).toBe(302);
    return new URL(res.headers.location).searchParams;
  }

  async function signIn() {
    const clientId = (await register()).body.client_id as string;
    const v = verifier();
    const code = (await consent(clientId, challengeOf(v))).get('code')!;
    const tokens = await t.http
      .post('/oauth/token')
      .send({ grant_type: 'authorization_code', code, code_verifier: v, client_id: clientId, redirect_uri: REDIRECT });
    expect(tokens.status).toBe(200);
    return { clientId, tokens: tokens.body };
  }

  it('registration: loopback or https redirect URIs only; 201 with the client id and metadata', async () => {
    const ok = await register();
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual(
      expect.objectContaining({
        client_id: expect.stringMatching(/^oc_/),
        client_name: 'Crossdeck CLI',
        redirect_uris: [REDIRECT],
        application_type: 'native',
        token_endpoint_auth_method: 'none',
      }),
    );
    expect((await register(['https://assistant.example.com/oauth/callback'])).status).toBe(201);
    for (const bad of [['http://example.com/callback'], ['http://localhost.evil.com:80/cb'], ['https://a.example.com/cb#frag'], [], 'nope']) {
      const res = await register(bad);
      expect({ bad, status: res.status, error: res.body.error }).toEqual({ bad, status: 400, error: 'invalid_redirect_uri' });
    }
  });

  it('authorize without a console session goes to the console sign-in with the request as next', async () => {
    const clientId = (await register()).body.client_id;
    const url = authorizeUrl(clientId, challengeOf(verifier()));
    const res = await t.http.get(url);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`/console/?next=${encodeURIComponent(url)}`);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('the consent page names the client, lists the workspaces, leaves identity scopes unticked, has no inline script', async () => {
    const clientId = (await register()).body.client_id;
    const res = await t.http.get(authorizeUrl(clientId, challengeOf(verifier()), 's', '')).set('Cookie', cookie);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Crossdeck CLI');
    expect(res.text).toContain(workspaceId);
    expect(res.text).toMatch(/value="reporting:aggregate" checked/);
    expect(res.text).toMatch(/value="reporting:identity">/);
    expect(res.text).toMatch(/value="crossmatch:read">/);
    expect(res.text).not.toContain('<script');
    expect(res.headers['content-security-policy']).toContain("form-action 'self' http://127.0.0.1:49152");
    expect(res.headers['x-frame-options']).toBe('DENY');
    // An unknown client or redirect is a page, never a redirect.
    expect((await t.http.get(authorizeUrl('oc_nope', 'x')).set('Cookie', cookie)).status).toBe(400);
  });

  it('a signed-out console session cookie no longer opens the consent page', async () => {
    const signedIn = await t.http.post('/console/api/session').send({ token: t.config.operatorToken });
    const own = ([] as string[]).concat(signedIn.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const clientId = (await register()).body.client_id;
    const url = authorizeUrl(clientId, challengeOf(verifier()));
    expect((await t.http.get(url).set('Cookie', own)).status).toBe(200);
    const csrf = (await t.http.get('/console/api/session').set('Cookie', own)).body.csrfToken;
    expect((await t.http.delete('/console/api/session').set('Cookie', own).set('X-CSRF-Token', csrf)).status).toBe(204);
    const after = await t.http.get(url).set('Cookie', own);
    expect(after.status).toBe(302);
    expect(after.headers.location).toBe(`/console/?next=${encodeURIComponent(url)}`);
  });

  it('deny redirects with access_denied and the state; a stale CSRF token is refused', async () => {
    const clientId = (await register()).body.client_id;
    const params = await consent(clientId, challengeOf(verifier()), 'deny');
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('st_123');
    const forged = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      state: 's',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      csrf_token: 'forged',
      workspace: workspaceId,
      decision: 'approve',
      scope: 'revenue:read',
    });
    const res = await t.http.post('/oauth/authorize').set('Cookie', cookie).set('Content-Type', 'application/x-www-form-urlencoded').send(forged.toString());
    expect(res.status).toBe(403);
  });

  it('code exchange: a workspace key as access token (hash only, listed as a workspace key), one-time code, PKCE checked', async () => {
    const clientId = (await register()).body.client_id;
    const v = verifier();
    const params = await consent(clientId, challengeOf(v));
    expect(params.get('state')).toBe('st_123');
    const code = params.get('code')!;
    const wrong = await t.http
      .post('/oauth/token')
      .send({ grant_type: 'authorization_code', code, code_verifier: verifier(), client_id: clientId, redirect_uri: REDIRECT });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    // The code was spent by the failed attempt too: one use only.
    const again = await t.http
      .post('/oauth/token')
      .send({ grant_type: 'authorization_code', code, code_verifier: v, client_id: clientId, redirect_uri: REDIRECT });
    expect(again.body.error).toBe('invalid_grant');

    const { tokens } = await signIn();
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^cd_wk_/),
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      refresh_token: expect.any(String),
      scope: 'reporting:aggregate revenue:read',
    });
    // One hour (the library counts it from the token's expiry, so a second may have passed).
    expect(tokens.expires_in).toBeGreaterThan(3590);
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    const [row] = await t.dataSource.query(`SELECT id, scopes, status FROM workspace_keys WHERE secret_hash = $1`, [
      createHash('sha256').update(tokens.access_token).digest('hex'),
    ]);
    expect(row).toEqual({ id: expect.stringMatching(/^key_/), scopes: ['reporting:aggregate', 'revenue:read'], status: 'active' });
    expect(JSON.stringify(await t.dataSource.query(`SELECT * FROM oauth_refresh_tokens`))).not.toContain(tokens.refresh_token);
    const projects = await t.http.get('/v1/workspace/projects').set(cli(tokens.access_token));
    expect(projects.status).toBe(200);
    expect(projects.body.data.projects.map((p: { id: string }) => p.id)).toEqual([project.projectId]);
  });

  it('an access token (workspace key) lasts one hour of the service clock', async () => {
    const { tokens } = await signIn();
    t.clock.advance(3601);
    try {
      const res = await t.http.get('/v1/workspace/projects').set(cli(tokens.access_token));
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe('This API key has expired');
    } finally {
      t.clock.advance(-3601);
    }
    expect((await t.http.get('/v1/workspace/projects').set(cli(tokens.access_token))).status).toBe(200);
  });

  it('a code is valid 60 s (service clock)', async () => {
    const clientId = (await register()).body.client_id;
    const v = verifier();
    const code = (await consent(clientId, challengeOf(v))).get('code')!;
    t.clock.advance(61);
    try {
      const res = await t.http
        .post('/oauth/token')
        .send({ grant_type: 'authorization_code', code, code_verifier: v, client_id: clientId, redirect_uri: REDIRECT });
      expect(res.body.error).toBe('invalid_grant');
    } finally {
      t.clock.advance(-61);
    }
  });

  it('refresh rotates the refresh token and the access key; reusing an old one revokes the whole family and its keys', async () => {
    const { clientId, tokens } = await signIn();
    const first = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(first.body.access_token).not.toBe(tokens.access_token);
    expect((await t.http.get('/v1/workspace/projects').set(cli(tokens.access_token))).status).toBe(401);
    expect((await t.http.get('/v1/workspace/projects').set(cli(first.body.access_token))).status).toBe(200);

    const reused = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    // The family is gone: the current access token and refresh token too.
    expect((await t.http.get('/v1/workspace/projects').set(cli(first.body.access_token))).status).toBe(401);
    const after = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId });
    expect(after.body.error).toBe('invalid_grant');
  });

  it('parallel refreshes of one token: exactly one wins, and the losers revoke the family with the tokens the winner got', async () => {
    for (let run = 0; run < 10; run++) {
      const { clientId, tokens } = await signIn();
      const parallel = run % 2 === 0 ? 2 : 6;
      const answers = await Promise.all(
        Array.from({ length: parallel }, () =>
          t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId }),
        ),
      );
      const winners = answers.filter((a) => a.status === 200);
      expect({ run, winners: winners.length, losers: answers.filter((a) => a.body.error === 'invalid_grant').length }).toEqual({
        run,
        winners: 1,
        losers: parallel - 1,
      });
      const won = winners[0].body as { access_token: string; refresh_token: string };
      expect({ run, access: (await t.http.get('/v1/workspace/projects').set(cli(won.access_token))).status }).toEqual({ run, access: 401 });
      const next = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: won.refresh_token, client_id: clientId });
      expect({ run, refresh: next.body.error }).toEqual({ run, refresh: 'invalid_grant' });
    }
  });

  it('a second use of a code fails and revokes the access and refresh tokens the first one got', async () => {
    const clientId = (await register()).body.client_id;
    const v = verifier();
    const code = (await consent(clientId, challengeOf(v))).get('code')!;
    const exchange = () =>
      t.http.post('/oauth/token').send({ grant_type: 'authorization_code', code, code_verifier: v, client_id: clientId, redirect_uri: REDIRECT });
    const first = await exchange();
    expect(first.status).toBe(200);
    expect((await t.http.get('/v1/workspace/projects').set(cli(first.body.access_token))).status).toBe(200);
    const replay = await exchange();
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await t.http.get('/v1/workspace/projects').set(cli(first.body.access_token))).status).toBe(401);
    const refresh = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('parallel exchanges of one code: one answers tokens, and the replay revokes them', async () => {
    for (let run = 0; run < 5; run++) {
      const clientId = (await register()).body.client_id;
      const v = verifier();
      const code = (await consent(clientId, challengeOf(v))).get('code')!;
      const answers = await Promise.all(
        Array.from({ length: 3 }, () =>
          t.http.post('/oauth/token').send({ grant_type: 'authorization_code', code, code_verifier: v, client_id: clientId, redirect_uri: REDIRECT }),
        ),
      );
      const winners = answers.filter((a) => a.status === 200);
      expect({ run, winners: winners.length }).toEqual({ run, winners: 1 });
      expect({ run, access: (await t.http.get('/v1/workspace/projects').set(cli(winners[0].body.access_token))).status }).toEqual({ run, access: 401 });
    }
  });

  it('revoke (RFC 7009): a refresh token or an access token ends the grant; unknown tokens are 200', async () => {
    const a = await signIn();
    expect((await t.http.post('/oauth/revoke').send({ token: a.tokens.refresh_token, client_id: a.clientId })).status).toBe(200);
    expect((await t.http.get('/v1/workspace/projects').set(cli(a.tokens.access_token))).status).toBe(401);
    const b = await signIn();
    const form = new URLSearchParams({ token: b.tokens.access_token, token_type_hint: 'access_token' }).toString();
    expect((await t.http.post('/oauth/revoke').set('Content-Type', 'application/x-www-form-urlencoded').send(form)).status).toBe(200);
    expect((await t.http.get('/v1/workspace/projects').set(cli(b.tokens.access_token))).status).toBe(401);
    expect(
      (await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: b.tokens.refresh_token, client_id: b.clientId })).body.error,
    ).toBe('invalid_grant');
    expect((await t.http.post('/oauth/revoke').send({ token: 'unknown' })).status).toBe(200);
  });

  it('registrations past 60 a minute from one address are 429 until the bucket refills', async () => {
    const limited = await createTestApp({ OPERATOR_TOKEN: `op_limited_${randomBytes(12).toString('hex')}` });
    try {
      const body = { client_name: 'x', redirect_uris: [REDIRECT] };
      const started = performance.now();
      for (let i = 0; i < 60; i++) expect((await limited.http.post('/oauth/register').send(body)).status).toBe(201);
      // The bucket refills one registration a second: a slow machine may have earned a few more.
      let refilled = 0;
      while (refilled <= 60 && (await limited.http.post('/oauth/register').send(body)).status === 201) refilled++;
      expect(refilled).toBeLessThanOrEqual(Math.ceil((performance.now() - started) / 1000));
      limited.clock.advance(2);
      expect((await limited.http.post('/oauth/register').send(body)).status).toBe(201);
    } finally {
      await limited.close();
    }
  });

  it('publishes RFC 8414 metadata naming the endpoints, PKCE S256 and public clients', async () => {
    const res = await t.http.get('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    const issuer = res.body.issuer as string;
    // Outside production without PUBLIC_BASE_URL: http://localhost:<PORT>.
    expect(issuer).toBe('http://localhost:3000');
    expect(res.body).toEqual(
      expect.objectContaining({
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        registration_endpoint: `${issuer}/oauth/register`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      }),
    );
  });

  it('metadata comes from PUBLIC_BASE_URL, never from the Host header or the forwarded scheme', async () => {
    const spoofed = await t.http
      .get('/.well-known/oauth-authorization-server')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example')
      .set('X-Forwarded-Proto', 'https');
    expect(spoofed.status).toBe(200);
    expect(spoofed.body.issuer).toBe('http://localhost:3000');
    expect(JSON.stringify(spoofed.body)).not.toContain('evil.example');
    const configured = await createTestApp({ PUBLIC_BASE_URL: 'https://api.example.com/' });
    try {
      const res = await configured.http.get('/.well-known/oauth-authorization-server').set('Host', 'evil.example');
      expect(res.body).toEqual(
        expect.objectContaining({
          issuer: 'https://api.example.com',
          authorization_endpoint: 'https://api.example.com/oauth/authorize',
          token_endpoint: 'https://api.example.com/oauth/token',
          registration_endpoint: 'https://api.example.com/oauth/register',
          revocation_endpoint: 'https://api.example.com/oauth/revoke',
        }),
      );
    } finally {
      await configured.close();
    }
  });

  it('without OPERATOR_TOKEN connector sign-in is off (404)', async () => {
    const off = await createTestApp({ OPERATOR_TOKEN: '' });
    try {
      expect((await off.http.post('/oauth/register').send({ client_name: 'x', redirect_uris: [REDIRECT] })).status).toBe(404);
      expect((await off.http.get('/oauth/authorize')).status).toBe(404);
      expect((await off.http.get('/.well-known/oauth-authorization-server')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('an access token (workspace key) no longer reaches a project of its workspace once archived: 403 as for a project it cannot see', async () => {
    const later = await createProjectWithApp(t);
    expect((await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${later.projectId}`).set(operatorAuth())).status).toBe(200);
    const { tokens } = await signIn();
    expect((await t.http.get('/v1/customers').query({ project: later.projectId }).set(cli(tokens.access_token))).status).toBe(200);
    expect((await t.http.post(`/admin/v1/projects/${later.projectId}/archive`).set(operatorAuth())).status).toBe(200);
    const res = await t.http.get('/v1/customers').query({ project: later.projectId }).set(cli(tokens.access_token));
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({
      type: 'permission_error',
      code: 'project_not_allowed',
      message: `This API key cannot read project ${later.projectId}`,
    });
    // A token issued after the archive does not reach it either.
    const fresh = (await signIn()).tokens.access_token;
    expect((await t.http.get('/v1/customers').query({ project: later.projectId }).set(cli(fresh))).status).toBe(403);
    const listed = await t.http.get('/v1/workspace/projects').set(cli(fresh));
    expect(listed.body.data.projects.map((p: { id: string }) => p.id)).toEqual([project.projectId]);
  });
});
