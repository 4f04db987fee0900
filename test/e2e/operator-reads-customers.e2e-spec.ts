import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

const REASON = 'Support ticket: goodwill after an outage';

describe('operator reads: customer search, the customer page and its timeline', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;
  const search = (q: string, env = 'sandbox', fx = p) =>
    t.http.get(`/admin/v1/projects/${fx.projectId}/customers?env=${env}&q=${encodeURIComponent(q)}`).set(operatorAuth());
  const detail = (customerId: string, env = 'sandbox', fx = p) =>
    t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}?env=${env}`).set(operatorAuth());
  const timeline = (customerId: string, query = '', fx = p) =>
    t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}/timeline?env=sandbox${query}`).set(operatorAuth());

  /** A customer identified in sandbox with an email, a second device and a card customer id. */
  async function customer(fx = p) {
    const userId = uid('user');
    const anonymousId = uid('anon');
    const email = `${uid('mail')}@example.com`;
    const first = await t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.pubTest)).send({ userId, anonymousId, email });
    expect(first.status).toBe(200);
    const customerId: string = first.body.serviceCustomerId;
    const secondDevice = uid('anon');
    await t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.pubTest)).send({ userId, anonymousId: secondDevice });
    const cardCustomer = `cus_${randomUUID().replace(/-/g, '').slice(0, 14)}`;
    await t.dataSource.query(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at) VALUES ($1, 'sandbox', 'card_customer_id', $2, $3, now())`,
      [fx.projectId, cardCustomer, customerId],
    );
    return { userId, anonymousId, secondDevice, email, customerId, cardCustomer };
  }

  describe('search', () => {
    it('matches exactly on user id, anonymous id, cdcust_ id, email and rail id, saying how', async () => {
      const c = await customer();
      const cases: [string, string][] = [
        [c.userId, 'user_id'],
        [c.secondDevice, 'anonymous_id'],
        [c.customerId, 'customer_id'],
        [c.email, 'email'],
        [c.cardCustomer, 'rail_id'],
      ];
      for (const [q, matchedBy] of cases) {
        const res = await search(q);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          object: 'list',
          env: 'sandbox',
          data: [
            {
              object: 'customer',
              serviceCustomerId: c.customerId,
              crossdeckCustomerId: c.customerId,
              userId: c.userId,
              anonymousIds: expect.arrayContaining([c.anonymousId, c.secondDevice]),
              email: c.email,
              createdAt: expect.any(Number),
              matchedBy,
            },
          ],
        });
      }
      // Exact only: a prefix finds nothing.
      expect((await search(c.userId.slice(0, -1))).body.data).toEqual([]);
    });

    it('stays in its project and environment', async () => {
      const c = await customer();
      expect((await search(c.userId, 'production')).body.data).toEqual([]);
      expect((await search(c.userId, 'sandbox', other)).body.data).toEqual([]);
      // Production is the default environment.
      const res = await t.http.get(`/admin/v1/projects/${p.projectId}/customers?q=${c.userId}`).set(operatorAuth());
      expect(res.body).toEqual({ object: 'list', env: 'production', data: [] });
    });

    it('validates q, limit and env, naming the parameter; an unknown project is 404', async () => {
      const base = `/admin/v1/projects/${p.projectId}/customers`;
      const missing = await t.http.get(base).set(operatorAuth());
      expectError(missing, 400, 'missing_required_param');
      expect(missing.body.error.message).toContain('q');
      for (const [query, name] of [
        ['q=ab', 'q'],
        ['q=abc&limit=0', 'limit'],
        ['q=abc&limit=101', 'limit'],
        ['q=abc&env=staging', 'env'],
      ]) {
        const res = await t.http.get(`${base}?${query}`).set(operatorAuth());
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain(name);
      }
      expectError(await t.http.get('/admin/v1/projects/proj_nope/customers?q=abcd').set(operatorAuth()), 404, 'resource_missing');
      expect((await t.http.get(`${base}?q=abcd`)).status).toBe(401);
    });
  });

  describe('the customer page', () => {
    it('answers identities, traits, entitlements, subscriptions, erasure and latest events in one call', async () => {
      const c = await customer();
      const grant = await t.http
        .post(`/admin/v1/projects/${p.projectId}/customers/${c.customerId}/grant`)
        .set(operatorAuth())
        .send({ env: 'sandbox', entitlementKey: 'pro', duration: 'P30D', reason: REASON });
      expect(grant.status).toBe(200);
      await t.dataSource.query(
        `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, created_at, updated_at)
         VALUES ($1, 'sandbox', 'card_payments', $2, $3, 'price_pro', 'active', now() + interval '30 days', 1, 'active', now(), now())`,
        [p.projectId, `sub_${c.cardCustomer}`, c.customerId],
      );
      const now = t.clock.nowMs();
      for (let i = 0; i < 25; i++) {
        await t.dataSource.query(
          `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms, level, fingerprint, customer_id)
           VALUES ($1, 'sandbox', $2, (to_timestamp($3 / 1000.0) AT TIME ZONE 'UTC')::date, $4, $5, $3, $3, $6, $7, $8)`,
          [
            p.projectId,
            `ev_${c.customerId}_${i}`,
            now - (25 - i) * 1000,
            p.appId,
            i === 24 ? 'error' : 'screen_view',
            i === 24 ? 'error' : null,
            i === 24 ? 'abcdef01' : null,
            c.customerId,
          ],
        );
      }
      const res = await detail(c.customerId);
      expect(res.status).toBe(200);
      const body = res.body;
      expect(body).toMatchObject({
        object: 'customer_detail',
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        env: 'sandbox',
        forgotten: false,
        traits: { email: c.email, firstName: null },
        erasure: null,
      });
      expect(body.identities.userId).toBe(c.userId);
      expect(body.identities.anonymousIds.sort()).toEqual([c.anonymousId, c.secondDevice].sort());
      expect(body.identities.aliases.map((a: { type: string; value: string }) => `${a.type}:${a.value}`)).toEqual(
        expect.arrayContaining([`developer:${c.userId}`, `card_customer_id:${c.cardCustomer}`]),
      );
      expect(body.entitlements).toEqual([
        expect.objectContaining({
          key: 'pro',
          active: true,
          state: 'active',
          source: 'grant',
          rail: 'manual',
          validUntil: expect.any(Number),
          grantedAt: expect.any(Number),
        }),
      ]);
      expect(body.subscriptions).toEqual([
        expect.objectContaining({
          rail: 'card_payments',
          subscriptionId: `sub_${c.cardCustomer}`,
          productId: 'price_pro',
          state: 'active',
          validUntil: expect.any(Number),
        }),
      ]);
      expect(body.recentEvents).toHaveLength(20);
      expect(body.recentEvents[0]).toEqual({ id: `ev_${c.customerId}_24`, name: 'error', timestampMs: now - 1000, level: 'error', fingerprint: 'abcdef01' });
      const times = body.recentEvents.map((e: { timestampMs: number }) => e.timestampMs);
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('shows the erasure status of a forgotten customer', async () => {
      const c = await customer();
      const forgot = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ userId: c.userId });
      expect(forgot.status).toBeLessThan(300);
      const res = await detail(c.customerId);
      expect(res.status).toBe(200);
      expect(res.body.forgotten).toBe(true);
      // The erasure job may already have run: queued, or deleted with its time.
      const erasure = res.body.erasure;
      expect(erasure).toEqual({
        status: expect.stringMatching(/^(queued|deleted)$/),
        queuedAt: expect.any(Number),
        deletedAt: erasure.status === 'deleted' ? expect.any(Number) : null,
      });
    });

    it("another project's or environment's customer is 404 resource_missing", async () => {
      const c = await customer();
      expectError(await detail(c.customerId, 'sandbox', other), 404, 'resource_missing');
      expectError(await detail(c.customerId, 'production'), 404, 'resource_missing');
      expectError(await detail('cdcust_nope'), 404, 'resource_missing');
      expectError(await detail('nope'), 404, 'resource_missing');
      expectError(await timeline(c.customerId, '', other), 404, 'resource_missing');
      expectError(await t.http.get(`/admin/v1/projects/proj_nope/customers/${c.customerId}`).set(operatorAuth()), 404, 'resource_missing');
    });
  });

  describe('the timeline', () => {
    it("lists the customer's audit entries newest first, each as GET /v1/server/audit/{eventId} answers it, paged with before", async () => {
      const c = await customer();
      const ids: string[] = [];
      for (const key of ['a_key', 'b_key', 'c_key']) {
        const res = await t.http
          .post(`/admin/v1/projects/${p.projectId}/customers/${c.customerId}/grant`)
          .set(operatorAuth())
          .send({ env: 'sandbox', entitlementKey: key, duration: 'P30D', reason: REASON });
        ids.push(res.body.auditEventId);
      }
      const first = await timeline(c.customerId, '&limit=2');
      expect(first.status).toBe(200);
      expect(first.body.hasMore).toBe(true);
      expect(first.body.data.map((e: { eventId: string }) => e.eventId)).toEqual([ids[2], ids[1]]);
      const one = await t.http.get(`/v1/server/audit/${ids[2]}`).set(keyHeaders(p, p.keys.skTest));
      expect(first.body.data[0]).toEqual(one.body.data);
      const next = await timeline(c.customerId, `&limit=2&before=${ids[1]}`);
      expect(next.body.data.map((e: { eventId: string }) => e.eventId)).toEqual([ids[0]]);
      expect(next.body.hasMore).toBe(false);
      expectError(await timeline(c.customerId, '&limit=500'), 400, 'invalid_param_value');
    });
  });
});
