import { createProject } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, SECRET_NEW, SECRET_OLD } from '../support/harness/webhooks-card.js';

describe('operator reads: the rails page (settings, secrets as booleans, webhook URL, notifications)', () => {
  const h = cardWebhookHarness();
  const { event, subscription, send } = h;
  const rails = (projectId: string, env?: string) =>
    h.t.http
      .get(`/admin/v1/projects/${projectId}/rails${env ? `?env=${env}` : ''}`)
      .set(operatorAuth())
      .set('Host', 'api.example.test');
  const notifications = (query: string, rail = 'card_payments') =>
    h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/rails/${rail}/notifications?${query}`).set(operatorAuth());

  it('lists every rail with its settings, which secrets are configured, its webhook URL and latest notifications of the environment', async () => {
    const { fx } = h;
    const sub = subscription();
    const sent = [];
    for (let i = 0; i < 3; i++) {
      const body = event('customer.subscription.updated', sub, { created: Math.floor(h.t.clock.nowMs() / 1000) + i });
      expect((await send(body)).status).toBe(200);
      sent.push(body.id);
    }
    const res = await rails(fx.projectId, 'sandbox');
    expect(res.status).toBe(200);
    expect(res.body.env).toBe('sandbox');
    expect(res.body.data).toEqual([{ rail: 'card_payments', enabled: true, accountId: 'acct_test_1', secretsConfigured: true }]);
    const byRail = Object.fromEntries(res.body.rails.map((r: { rail: string }) => [r.rail, r]));
    expect(Object.keys(byRail).sort()).toEqual(['android_store', 'card_payments', 'ios_store']);
    expect(byRail.card_payments).toMatchObject({
      configured: true,
      settings: { accountId: 'acct_test_1' },
      secrets: { webhook: true, read: false },
      // PUBLIC_BASE_URL, never the request's Host.
      webhookUrl: `${h.t.config.publicBaseUrl}/v1/webhooks/card_payments/${fx.projectId}`,
      notificationsHasMore: false,
    });
    expect(byRail.ios_store).toMatchObject({ configured: false, settings: {}, secrets: { webhook: null, read: false }, notifications: [] });
    expect(byRail.android_store).toMatchObject({ configured: false, secrets: { webhook: false, read: false } });
    const listed = byRail.card_payments.notifications;
    expect(listed.map((n: { id: string }) => n.id)).toEqual([...sent].reverse());
    expect(listed[0]).toEqual({
      object: 'rail_notification',
      id: sent[2],
      receivedAt: expect.any(Number),
      type: 'customer.subscription.updated',
      decision: expect.stringMatching(/^(applied|no_op)$/),
      railId: sub.id,
      customerId: expect.stringMatching(/^cdcust_/),
      auditEventId: expect.any(String),
    });
    // Never a secret.
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(SECRET_NEW);
    expect(text).not.toContain(SECRET_OLD);
    // Production (the default) has none of these sandbox notifications.
    const production = await rails(fx.projectId);
    expect(production.body.env).toBe('production');
    expect(production.body.rails.find((r: { rail: string }) => r.rail === 'card_payments').notifications).toEqual([]);
  });

  it('pages a rail’s notifications with before and hasMore', async () => {
    const first = await notifications('env=sandbox&limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', env: 'sandbox', hasMore: true });
    expect(first.body.data).toHaveLength(2);
    const rest = await notifications(`env=sandbox&limit=2&before=${first.body.data[1].id}`);
    expect(rest.body.data.length).toBeGreaterThanOrEqual(1);
    const ids = [...first.body.data, ...rest.body.data].map((n: { id: string }) => n.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('validates rail, env and limit; an unknown project is 404; another project sees none of these', async () => {
    expectError(await notifications('env=sandbox', 'paypal'), 400, 'invalid_param_value');
    expectError(await notifications('env=staging'), 400, 'invalid_param_value');
    expectError(await notifications('limit=0'), 400, 'invalid_param_value');
    expectError(await h.t.http.get('/admin/v1/projects/proj_nope/rails/card_payments/notifications').set(operatorAuth()), 404, 'resource_missing');
    expectError(await rails(h.fx.projectId, 'staging'), 400, 'invalid_param_value');
    const other = await createProject(h.t);
    const res = await rails(other, 'sandbox');
    expect(res.status).toBe(200);
    for (const panel of res.body.rails) expect(panel.notifications).toEqual([]);
  });
});
