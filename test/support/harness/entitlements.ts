import { Sql } from '#platform';
import { EntitlementRepository } from '../../../libs/entitlements/src/domain/entitlement.repository.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../fixtures.js';
import { createTestApp, type TestApp } from '../test-app.js';
import { testScope } from '../scopes.js';

export const GRANT_ID = /^srv_grant_[a-z0-9]{24}$/;
export const REVOKE_ID = /^srv_revoke_[a-z0-9]{24}$/;
export const REASON = 'Goodwill credit after the March outage';
export const DAY = 86_400;

/** One app and project per spec file, with the entitlement endpoints' request helpers (registers its own beforeAll/afterAll). */
export function entitlementsHarness() {
  let t: TestApp;
  let fx: ProjectFixture;
  let counter = 0;

  const sk = (key = fx.keys.skTest) => keyHeaders(fx, key);
  const pub = (key = fx.keys.pubTest) => keyHeaders(fx, key);
  const now = () => t.clock.nowSeconds();

  /** A fresh customer of the fixture's project (sandbox unless a live key is given). */
  async function newCustomer(key = fx.keys.skTest, f = fx): Promise<{ customerId: string; userId: string; anonymousId: string }> {
    counter += 1;
    const userId = `user_${counter}_${Math.random().toString(36).slice(2, 8)}`;
    const anonymousId = `anon_${counter}_${Math.random().toString(36).slice(2, 8)}`;
    const res = await t.http.post('/v1/identify').set(keyHeaders(f, key)).send({ userId, anonymousId });
    if (res.status !== 200) throw new Error(`identify failed: ${res.status} ${JSON.stringify(res.body)}`);
    expect(res.body.serviceCustomerId).toMatch(/^cdcust_/);
    return { customerId: res.body.serviceCustomerId, userId, anonymousId };
  }

  const grant = (customerId: string, body: Record<string, unknown>, headers = sk()) =>
    t.http.post(`/v1/server/customers/${customerId}/grant`).set(headers).send(body);
  const revoke = (customerId: string, body: Record<string, unknown>, headers = sk()) =>
    t.http.post(`/v1/server/customers/${customerId}/revoke`).set(headers).send(body);
  const serverRead = (customerId: string, headers = sk()) => t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(headers);
  const publicRead = (query: Record<string, string | undefined>, headers = pub()) => t.http.get('/v1/entitlements').query(query).set(headers);
  const audit = (eventId: string, headers = sk()) => t.http.get(`/v1/server/audit/${eventId}`).set(headers);

  async function writeRail(
    customerId: string,
    key: string,
    rail: 'ios_store' | 'card_payments' | 'android_store',
    validUntil: number | null,
    f = fx,
    env: 'sandbox' | 'production' = 'sandbox',
  ) {
    // The row alone, as a rail leaves it (no subscription record, no audit entry, no change announced).
    const rows = t.app.get(EntitlementRepository);
    return t.app.get(Sql).transaction(() =>
      rows.upsert(
        testScope(f.projectId, env),
        {
          customerId,
          key,
          rail,
          productId: 'com.example.pro.monthly',
          subscriptionId: '2000000123456789',
          state: 'active',
          validUntil,
          lastEventId: null,
        },
        t.clock.now(),
      ),
    );
  }

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());
  return {
    get t() {
      return t;
    },
    get fx() {
      return fx;
    },
    get counter() {
      return counter;
    },
    sk,
    pub,
    now,
    newCustomer,
    grant,
    revoke,
    serverRead,
    publicRead,
    audit,
    writeRail,
  };
}
