import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { EventIdentityResolver } from '#telemetry';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

/**
 * `crossdeckCustomerId`, the public clients' name for the service customer id: returned beside
 * every `serviceCustomerId` with the same value, and accepted wherever `serviceCustomerId` is.
 * Also the entitlement read with both `userId` and `anonymousId`, as the public Node client sends it.
 */

const NODE_SDK = '@cross-deck/node@1.2.0';
const REASON = 'Support goodwill grant for the outage';

/** What the public Node client sends on every call (server side, secret key). */
function nodeClient(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}`, 'Crossdeck-Sdk-Version': NODE_SDK, Accept: 'application/json' };
}

describe('customer id names: crossdeckCustomerId beside serviceCustomerId', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const sk = () => nodeClient(p.keys.skTest);
  const pub = () => keyHeaders(p, p.keys.pubTest);

  async function newCustomer(): Promise<{ userId: string; anonymousId: string; customerId: string; body: any }> {
    const userId = `user_${randomUUID().slice(0, 8)}`;
    const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
    const res = await t.http.post('/v1/identity/alias').set(sk()).send({ userId, anonymousId });
    expect(res.status).toBe(200);
    return { userId, anonymousId, customerId: res.body.serviceCustomerId, body: res.body };
  }

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    const roomy = { sustained: 1000, burst: 10000 };
    await setRateLimits(t, p.projectId, { alias: roomy, forget: roomy, entitlements: roomy });
  });
  afterAll(async () => t.close());

  it('identify, entitlement lists, grant, revoke, resolve and forget carry crossdeckCustomerId with the same value', async () => {
    const { userId, anonymousId, customerId, body } = await newCustomer();
    expect(customerId).toMatch(/^cdcust_/);
    expect(body.crossdeckCustomerId).toBe(customerId);

    const grant = await t.http.post(`/v1/server/customers/${customerId}/grant`).set(sk()).send({ entitlementKey: 'pro', duration: 'P30D', reason: REASON });
    expect(grant.status).toBe(200);
    expect(grant.body).toMatchObject({ serviceCustomerId: customerId, crossdeckCustomerId: customerId });

    const list = await t.http.get('/v1/entitlements').query({ userId }).set(sk());
    expect(list.body).toMatchObject({ object: 'list', serviceCustomerId: customerId, crossdeckCustomerId: customerId });
    const server = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(sk());
    expect(server.body).toMatchObject({ serviceCustomerId: customerId, crossdeckCustomerId: customerId });
    const unknown = await t.http.get('/v1/entitlements').query({ userId: 'nobody_here' }).set(sk());
    expect(unknown.body).toMatchObject({ data: [], serviceCustomerId: '', crossdeckCustomerId: '' });

    const resolved = await t.http.post('/v1/resolve').set(pub()).send({ anonymousId });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ serviceCustomerId: customerId, crossdeckCustomerId: customerId });
    // Below tier 3 entitlements stay null; the keys are strings at tier 3 (covered by the trust tests).
    expect(resolved.body.entitlements).toBeNull();

    const revoke = await t.http.post(`/v1/server/customers/${customerId}/revoke`).set(sk()).send({ entitlementKey: 'pro', reason: 'Refunded' });
    expect(revoke.body).toMatchObject({ action: 'revoke', serviceCustomerId: customerId, crossdeckCustomerId: customerId });

    const forgot = await t.http.post('/v1/identity/forget').set(sk()).send({ userId });
    expect(forgot.status).toBe(200);
    expect(forgot.body).toMatchObject({ serviceCustomerId: customerId, crossdeckCustomerId: customerId });
    const none = await t.http.post('/v1/identity/forget').set(sk()).send({ anonymousId: 'anon_nobody' });
    expect(none.body).toMatchObject({ serviceCustomerId: null, crossdeckCustomerId: null });
  });

  it("the Node client's isEntitled() path: the entitlement read after a grant names crossdeckCustomerId, by userId and anonymousId together", async () => {
    const { userId, anonymousId, customerId } = await newCustomer();
    await t.http.post(`/v1/server/customers/${customerId}/grant`).set(sk()).send({ entitlementKey: 'pro', duration: 'P30D', reason: REASON });
    // getEntitlements({ userId, anonymousId }) sends both hints as query parameters.
    const res = await t.http.get('/v1/entitlements').query({ userId, anonymousId }).set(sk());
    expect(res.status).toBe(200);
    expect(res.body.crossdeckCustomerId).toBe(customerId);
    expect(res.body.data.map((e: any) => e.key)).toEqual(['pro']);
  });

  it('userId with anonymousId: the customer they resolve to, the userId’s when they differ, the device’s when the user is unknown', async () => {
    const a = await newCustomer();
    const b = await newCustomer();
    const differ = await t.http.get('/v1/entitlements').query({ userId: a.userId, anonymousId: b.anonymousId }).set(sk());
    expect(differ.status).toBe(200);
    expect(differ.body.crossdeckCustomerId).toBe(a.customerId);
    const unknownUser = await t.http.get('/v1/entitlements').query({ userId: 'nobody_yet', anonymousId: b.anonymousId }).set(sk());
    expect(unknownUser.body.serviceCustomerId).toBe(b.customerId);
    const neither = await t.http.get('/v1/entitlements').query({ userId: 'nobody_yet', anonymousId: 'anon_nobody' }).set(pub());
    expect(neither.body).toMatchObject({ data: [], serviceCustomerId: '' });
    // A customer id beside them wins.
    const named = await t.http.get('/v1/entitlements').query({ customerId: b.customerId, userId: a.userId, anonymousId: a.anonymousId }).set(sk());
    expect(named.body.serviceCustomerId).toBe(b.customerId);
  });

  it('the entitlement read takes the customer id as serviceCustomerId or crossdeckCustomerId too; different ids are 400 naming them', async () => {
    const { customerId } = await newCustomer();
    for (const query of [{ crossdeckCustomerId: customerId }, { serviceCustomerId: customerId }, { customerId, crossdeckCustomerId: customerId }]) {
      const res = await t.http.get('/v1/entitlements').query(query).set(pub());
      expect(res.status).toBe(200);
      expect(res.body.crossdeckCustomerId).toBe(customerId);
    }
    const clash = await t.http.get('/v1/entitlements').query({ customerId, crossdeckCustomerId: 'cdcust_other' }).set(sk());
    expectError(clash, 400, 'invalid_param_value');
    expect(clash.body.error.message).toMatch(/customerId, crossdeckCustomerId/);
    expectError(await t.http.get('/v1/entitlements').query({ crossdeckCustomerId: 'cust_1' }).set(sk()), 400, 'invalid_customer');
  });

  it("an event whose only identity hint is crossdeckCustomerId (the Node client's ingest() example) is accepted and stored as the customer hint", async () => {
    const { customerId } = await newCustomer();
    const eventId = `evt_${randomUUID()}`;
    const res = await t.http
      .post('/v1/events')
      .set(sk())
      .send({ events: [{ eventId, name: 'invoice.paid', crossdeckCustomerId: customerId, properties: { amount: 4900 } }] });
    expect(res.status).toBeLessThan(300);
    // Kept as the customer hint: once hints are resolved, the event is the customer's.
    await t.app.get(EventIdentityResolver).runOnce();
    const page = await t.http.get(`/admin/v1/projects/${p.projectId}/customers/${customerId}?env=sandbox`).set(operatorAuth());
    expect(page.status).toBe(200);
    expect(page.body.recentEvents).toEqual([expect.objectContaining({ id: eventId, name: 'invoice.paid' })]);
    const none = await t.http
      .post('/v1/events')
      .set(sk())
      .send({ events: [{ name: 'invoice.paid' }] });
    expectError(none, 400, 'invalid_param_value');
    expect(none.body.error.message).toMatch(/crossdeckCustomerId/);
  });
});
