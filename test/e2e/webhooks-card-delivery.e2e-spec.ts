import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { createProject, createProjectWithApp, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, SECRET_OLD, SECRET_NEW } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, configuration and delivery (POST /v1/webhooks/card_payments/{projectId})', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  beforeAll(() => {
    ({ t, fx, file } = h);
  });
  const { logs, now, subscription, event, send, counts } = h;

  describe('operator configuration', () => {
    it('PUT rails/card_payments enables the rail; GET rails shows it with secretsConfigured', async () => {
      const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/rails`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', data: [{ rail: 'card_payments', enabled: true, accountId: 'acct_test_1', secretsConfigured: true }] });
      const other = await createProject(t);
      await t.http.put(`/admin/v1/projects/${other}/rails/card_payments`).set(operatorAuth()).send({});
      const list = await t.http.get(`/admin/v1/projects/${other}/rails`).set(operatorAuth());
      expect(list.body.data).toEqual([{ rail: 'card_payments', enabled: true, secretsConfigured: false }]);
    });

    it('unknown project: 404; bad accountId: 400; no operator token: 401', async () => {
      expectError(await t.http.put('/admin/v1/projects/proj_nope/rails/card_payments').set(operatorAuth()).send({}), 404, 'resource_missing');
      expectError(await t.http.get('/admin/v1/projects/proj_nope/rails').set(operatorAuth()), 404, 'resource_missing');
      expectError(
        await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 42 }),
        400,
        'invalid_param_value',
      );
      const res = await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).send({});
      expect(res.status).toBe(401);
    });
  });

  describe('answers and errors in the documented order', () => {
    it('404 for an unknown project or a project without the rail, even with a bad body or signature', async () => {
      expectError(await send(null, { projectId: 'proj_nope', raw: 'not json', header: 'garbage' }), 404, 'resource_missing');
      const bare = await createProject(t);
      expectError(await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { projectId: bare }), 404, 'resource_missing');
    });

    it('400 invalid_param_value for a body that is not JSON (before the signature)', async () => {
      expectError(await send(null, { raw: '{not json', header: 'garbage' }), 400, 'invalid_param_value');
      expectError(await send(null, { raw: '[1,2]', header: 'garbage' }), 400, 'invalid_param_value');
    });

    it('400 invalid_signature: wrong secret, tampered body, missing or malformed header, stale timestamp; one log line, nothing stored', async () => {
      const before = await counts();
      const body = event('customer.subscription.created', subscription());
      const payload = JSON.stringify(body);
      const signed = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET_NEW, timestamp: now() });
      logs.length = 0;
      const cases = [
        await send(body, { secret: 'whsec_not_configured_000000000000' }),
        await send(null, { raw: payload.replace('"active"', '"trialing"'), header: signed }),
        await send(body, { header: null }),
        await send(body, { header: 'v1=abc' }),
        await send(body, { timestamp: now() - 301 }),
      ];
      for (const res of cases) expectError(res, 400, 'invalid_signature');
      const refusals = logs.filter((line) => line.msg === 'store notification refused: authentication failed');
      expect(refusals).toHaveLength(cases.length);
      expect(refusals.map((line) => line.reason)).toEqual([
        'no configured secret matches the signature',
        'no configured secret matches the signature',
        'the Stripe-Signature header is missing',
        'the Stripe-Signature header is malformed',
        'the signature timestamp is outside the 300 s tolerance',
      ]);
      expect(JSON.stringify(logs)).not.toContain(SECRET_NEW);
      expect(await counts()).toEqual(before);
    });

    it('the tolerance is measured on the service clock (test clock moved forward)', async () => {
      const other = await createProjectWithApp(t);
      await t.http.put(`/admin/v1/projects/${other.projectId}/rails/card_payments`).set(operatorAuth()).send({});
      file.write({
        projects: {
          [fx.projectId]: { card_payments: { webhookSecrets: [SECRET_NEW, SECRET_OLD] } },
          [other.projectId]: { card_payments: { webhookSecrets: [SECRET_NEW] } },
        },
      });
      t.app.get(RailSecrets).reloadIfChanged();
      const body = event('invoice.paid', { id: 'in_1', object: 'invoice' });
      const realNow = Math.floor(Date.now() / 1000);
      // Signed "now" by the wall clock, but the service clock is 10 minutes ahead.
      const advance = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 600 });
      expect(advance.status).toBe(200);
      expectError(await send(body, { projectId: other.projectId, timestamp: realNow }), 400, 'invalid_signature');
      expect((await send(body, { projectId: other.projectId, timestamp: now() })).status).toBe(200);
    });

    it('a project without a configured secret: invalid_signature', async () => {
      const other = await createProject(t);
      await t.http.put(`/admin/v1/projects/${other}/rails/card_payments`).set(operatorAuth()).send({});
      expectError(await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { projectId: other }), 400, 'invalid_signature');
    });

    it('authentic but not an event: 400 invalid_param_value', async () => {
      expectError(await send({ hello: 'world' }), 400, 'invalid_param_value');
      expectError(await send(event('customer.subscription.updated', { id: 'x', object: 'invoice' })), 400, 'invalid_param_value');
    });

    it('accepts the path without /v1 and answers with X-Request-Id', async () => {
      const body = event('invoice.paid', { id: 'in_1', object: 'invoice' });
      const payload = JSON.stringify(body);
      const res = await t.http
        .post(`/webhooks/card_payments/${fx.projectId}`)
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET_NEW, timestamp: now() }))
        .send(payload);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      expect(res.body).toEqual({
        object: 'rail_notification',
        rail: 'card_payments',
        notificationId: body.id,
        env: 'sandbox',
        decision: 'no_op',
        duplicate: false,
        serviceCustomerId: null,
        crossdeckCustomerId: null,
        auditEventId: expect.stringMatching(/^rail_evt_/),
      });
    });
  });
});
