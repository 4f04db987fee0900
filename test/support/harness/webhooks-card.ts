import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../fixtures.js';
import { RailSecretsFile } from '../rail-secrets-file.js';
import { createTestApp, operatorAuth, type TestApp, type TestAppOptions } from '../test-app.js';
import { cardEventBuilders } from '../card-events.js';

export const SECRET_OLD = 'whsec_old_0123456789abcdefghijklmnop';
export const SECRET_NEW = 'whsec_new_abcdefghijklmnop0123456789';
export const SECRET_ROTATED = 'whsec_rotated_zyxwvutsrqponmlkji9876';

let seq = 0;
export const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/**
 * One app per spec file with the card-payments rail enabled, its secrets file and catalogue, and signed-event helpers (registers its own beforeAll/afterAll).
 * `ownDatabase`: the app runs on a database of its own (createTestApp's option).
 */
export function cardWebhookHarness(env: Record<string, string> = {}, options: Pick<TestAppOptions, 'ownDatabase'> = {}) {
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  const logs: Record<string, unknown>[] = [];
  const now = () => Math.floor(t.clock.nowMs() / 1000);

  beforeAll(async () => {
    file = new RailSecretsFile();
    t = await createTestApp(
      { RAIL_SECRETS_FILE: file.path, LOG_LEVEL: 'warn', ...env },
      { onLogLine: (line) => logs.push(line), ownDatabase: options.ownDatabase },
    );
    fx = await createProjectWithApp(t);
    file.write({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: [SECRET_NEW, SECRET_OLD] } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    const rail = await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_test_1' });
    expect(rail.status).toBe(200);
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({
        products: [
          { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] },
          { rail: 'card_payments', productId: 'prod_basic', entitlementKeys: ['basic'] },
          { rail: 'card_payments', productId: 'prod_team', entitlementKeys: ['pro', 'team'] },
        ],
      });
    expect(products.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    file?.remove();
  });

  const { subscription, event } = cardEventBuilders(now, uid);

  function send(body: unknown, o: { projectId?: string; secret?: string; timestamp?: number; header?: string | null; raw?: string } = {}) {
    const payload = o.raw ?? JSON.stringify(body);
    const header =
      o.header === undefined
        ? Stripe.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? SECRET_NEW, timestamp: o.timestamp ?? now() })
        : o.header;
    const req = t.http.post(`/v1/webhooks/card_payments/${o.projectId ?? fx.projectId}`).set('Content-Type', 'application/json');
    if (header !== null) req.set('Stripe-Signature', header);
    return req.send(payload);
  }

  const entitlements = (customerId: string, key = fx.keys.skTest) => t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, key));
  const activeKeys = async (customerId: string, key = fx.keys.skTest): Promise<string[]> => {
    const res = await entitlements(customerId, key);
    expect(res.status).toBe(200);
    return res.body.data
      .filter((e: any) => e.isActive)
      .map((e: any) => e.key)
      .sort();
  };
  /**
   * A card subscription started, canceled at period end, uncanceled, changed to another product
   * and deleted, each notification applied; answers the steps sent and the answers.
   */
  const productChangeLifecycle = async (metadata: Record<string, string> = {}) => {
    const t0 = now();
    const periodEnd = t0 + 30 * 86_400;
    const sub = subscription({ periodEnd, metadata });
    const team = subscription({ id: sub.id, customer: sub.customer, product: 'prod_team', periodEnd, metadata });
    const steps = [
      event('customer.subscription.created', sub, { created: t0 }),
      event('customer.subscription.updated', { ...sub, cancel_at_period_end: true }, { created: t0 + 1 }),
      event('customer.subscription.updated', { ...sub, cancel_at_period_end: false }, { created: t0 + 2 }),
      event('customer.subscription.updated', team, { created: t0 + 3 }),
      event('customer.subscription.deleted', { ...team, status: 'canceled' }, { created: t0 + 4 }),
    ];
    const answers: { serviceCustomerId: string; auditEventId: string }[] = [];
    for (const step of steps) {
      const res = await send(step);
      expect(res.body.decision).toBe('applied');
      answers.push(res.body);
    }
    return { sub, steps, answers, customerId: answers[0]!.serviceCustomerId, t0 };
  };
  const audit = (eventId: string, key = fx.keys.skTest) => t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(fx, key));
  const counts = async () => {
    const [{ n: notifications }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM rail_notifications WHERE project_id = $1`, [fx.projectId]);
    const [{ n: entries }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE project_id = $1 AND rail = 'card_payments'`, [
      fx.projectId,
    ]);
    return { notifications, entries };
  };

  return {
    get t() {
      return t;
    },
    get fx() {
      return fx;
    },
    get file() {
      return file;
    },
    logs,
    now,
    subscription,
    event,
    send,
    productChangeLifecycle,
    entitlements,
    activeKeys,
    audit,
    counts,
  };
}
