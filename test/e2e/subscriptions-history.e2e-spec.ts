import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

const DAY = 86_400;

/**
 * The customer history read through HTTP (GET /v1/server/customers/{id}/history and the
 * operator's): signed card events drive a subscription through its lifecycle in a project with
 * no webhook endpoints, and every lifecycle event reads back newest first, a page at a time,
 * with the rail's and the audit entry's ids; a merge brings the other customer's history along.
 */
describe('subscriptions: the customer history read', () => {
  const h = cardWebhookHarness();
  const { now, subscription, event, send } = h;
  let other: ProjectFixture;
  beforeAll(async () => {
    other = await createProjectWithApp(h.t);
  });

  const sk = (fx = h.fx) => keyHeaders(fx, fx.keys.skTest);
  const serverHistory = (customerId: string, query: Record<string, string> = {}, fx = h.fx) =>
    h.t.http.get(`/v1/server/customers/${customerId}/history`).query(query).set(sk(fx));
  const operatorHistory = (customerId: string, query: Record<string, string> = {}, projectId = h.fx.projectId) =>
    h.t.http
      .get(`/admin/v1/projects/${projectId}/customers/${customerId}/history`)
      .query({ env: 'sandbox', ...query })
      .set(operatorAuth());

  /** Every entry of a history, read a page of `limit` at a time. */
  async function allPages(read: (query: Record<string, string>) => Promise<{ status: number; body: any }>, limit: number) {
    const entries: any[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const res = await read({ limit: String(limit), ...(before ? { before } : {}) });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      entries.push(...res.body.data);
      if (!res.body.hasMore) return entries;
      expect(res.body.data).toHaveLength(limit);
      before = res.body.data[res.body.data.length - 1].id;
    }
    throw new Error('the history never ended');
  }

  const lifecycle = h.productChangeLifecycle;

  it('every lifecycle event of a project without webhook endpoints, newest first, with the rail event and audit entry ids', async () => {
    const endpoints = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`).set(operatorAuth());
    expect(endpoints.status).toBe(200);
    expect(endpoints.body.data).toEqual([]);
    const { sub, steps, answers, customerId, t0 } = await lifecycle();
    const res = await serverHistory(customerId);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body.object).toBe('list');
    expect(res.body.hasMore).toBe(false);
    const data = res.body.data as any[];
    expect(data.map((e) => [e.type, e.occurredAt, e.railEventId])).toEqual([
      ['subscription.expired', t0 + 4, steps[4].id],
      ['subscription.product_changed', t0 + 3, steps[3].id],
      ['subscription.uncanceled', t0 + 2, steps[2].id],
      ['subscription.canceled', t0 + 1, steps[1].id],
      ['subscription.started', t0, steps[0].id],
    ]);
    for (const entry of data) {
      expect(entry).toEqual({
        id: expect.stringMatching(/^hist_[a-z0-9]{24}$/),
        type: expect.any(String),
        occurredAt: expect.any(Number),
        rail: 'card_payments',
        subscriptionId: sub.id,
        productId: expect.any(String),
        auditEventId: expect.stringMatching(/^rail_evt_/),
        railEventId: expect.any(String),
        details: expect.any(Object),
      });
    }
    expect(data.map((e) => e.auditEventId)).toEqual([...answers].reverse().map((a) => a.auditEventId));
    expect(data[0].details).toEqual({ expirationReason: expect.any(String) });
    expect(data[1]).toEqual(expect.objectContaining({ productId: 'prod_team', details: { previousProductId: 'prod_pro', effective: 'immediate' } }));
    expect(data[3].details).toEqual({ reason: expect.any(String) });
    expect(data[4]).toEqual(expect.objectContaining({ productId: 'prod_pro', details: { periodType: 'normal', isTrialStart: false } }));
    // The audit entry the history names is the change's.
    expect((await h.audit(data[4].auditEventId)).body.data).toEqual(expect.objectContaining({ eventId: data[4].auditEventId, customerId }));

    // The operator reads the same history.
    const operator = await operatorHistory(customerId);
    expect(operator.status).toBe(200);
    expect(operator.body).toEqual(res.body);
  });

  it('pages: limit entries at a time, before the id of the last one, hasMore until the oldest; both reads page alike', async () => {
    const { customerId } = await lifecycle();
    const full = (await serverHistory(customerId, { limit: '100' })).body.data;
    expect(full).toHaveLength(5);
    for (const limit of [1, 2, 4]) {
      expect(await allPages((q) => serverHistory(customerId, q), limit)).toEqual(full);
      expect(await allPages((q) => operatorHistory(customerId, q), limit)).toEqual(full);
    }
    const first = await serverHistory(customerId, { limit: '2' });
    expect(first.body.hasMore).toBe(true);
    const last = await serverHistory(customerId, { before: full[3].id });
    expect(last.body).toEqual({ object: 'list', data: [full[4]], hasMore: false });
    // Events recorded after a page was read come before it: the next page is unchanged.
    const older = await serverHistory(customerId, { before: full[1].id, limit: '2' });
    expect(older.body.data).toEqual(full.slice(2, 4));
  });

  it('limit is an integer 1 to 100 and before an id of this history, else 400 invalid_param_value naming the field', async () => {
    const { customerId } = await lifecycle();
    const mine = (await serverHistory(customerId)).body.data;
    const { customerId: someoneElse } = await lifecycle();
    const elses = (await serverHistory(someoneElse)).body.data;
    for (const read of [(q: Record<string, string>) => serverHistory(customerId, q), (q: Record<string, string>) => operatorHistory(customerId, q)]) {
      for (const limit of ['0', '101', '-1', '1.5', 'ten', '1e2']) {
        const res = await read({ limit });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain('limit');
      }
      for (const before of ['nope', 'hist_', 'x'.repeat(65), elses[0].id, mine[0].id.replace(/.$/, (c: string) => (c === 'a' ? 'b' : 'a'))]) {
        const res = await read({ before });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain('before');
      }
      expect((await read({ limit: '100' })).status).toBe(200);
      expect((await read({ limit: '1' })).body.data).toHaveLength(1);
    }
  });

  it('unknown customer: server 400 invalid_customer, operator 404; a customer with no subscription has an empty history', async () => {
    expectError(await serverHistory('cdcust_doesnotexist'), 400, 'invalid_customer');
    expectError(await serverHistory('nope'), 400, 'invalid_customer');
    expectError(await operatorHistory('cdcust_doesnotexist'), 404, 'resource_missing');
    const identified = await h.t.http
      .post('/v1/identify')
      .set(keyHeaders(h.fx, h.fx.keys.pubTest))
      .send({ userId: uid('user'), anonymousId: uid('anon') });
    const quiet = identified.body.serviceCustomerId as string;
    expect((await serverHistory(quiet)).body).toEqual({ object: 'list', data: [], hasMore: false });
    expect((await operatorHistory(quiet)).body).toEqual({ object: 'list', data: [], hasMore: false });
  });

  it("another tenant never reads it: another project's key or operator path, the other environment, a publishable key", async () => {
    const { customerId } = await lifecycle();
    expectError(await serverHistory(customerId, {}, other), 400, 'invalid_customer');
    expectError(await operatorHistory(customerId, {}, other.projectId), 404, 'resource_missing');
    expectError(await operatorHistory(customerId, { env: 'production' }), 404, 'resource_missing');
    expectError(await operatorHistory(customerId, {}, 'proj_doesnotexist'), 404, 'resource_missing');
    expectError(await operatorHistory(customerId, { env: 'staging' }), 400, 'invalid_param_value');
    expectError(await h.t.http.get(`/v1/server/customers/${customerId}/history`).set(keyHeaders(h.fx, h.fx.keys.skLive)), 400, 'invalid_customer');
    expect((await h.t.http.get(`/v1/server/customers/${customerId}/history`).set(keyHeaders(h.fx, h.fx.keys.pubTest))).status).toBe(401);
    expect((await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/customers/${customerId}/history?env=sandbox`)).status).toBe(401);
  });

  it("a merged customer's history holds the events of the customer merged into it, in time order; the other's is empty", async () => {
    const identify = (body: object) => h.t.http.post('/v1/identify').set(keyHeaders(h.fx, h.fx.keys.pubTest)).send(body);
    const a = { userId: uid('user'), anonymousId: uid('anon') };
    const b = { userId: uid('user'), anonymousId: uid('anon') };
    const canonical: string = (await identify(a)).body.serviceCustomerId;
    const merged: string = (await identify(b)).body.serviceCustomerId;
    const ofMerged = await lifecycle({ serviceCustomerId: merged });
    expect(ofMerged.customerId).toBe(merged);
    h.t.clock.advance(10);
    const ofCanonical = await lifecycle({ serviceCustomerId: canonical });
    expect(ofCanonical.customerId).toBe(canonical);
    const before = (await serverHistory(merged)).body.data;
    expect(before).toHaveLength(5);

    expect((await identify({ userId: a.userId, anonymousId: b.anonymousId })).body.mergePending).toBe(true);
    const reviews = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
    const review = reviews.body.data.find((r: { otherCustomerId: string }) => r.otherCustomerId === merged);
    expect((await h.t.http.post(`/admin/v1/projects/${h.fx.projectId}/merge-reviews/${review.id}/approve`).set(operatorAuth())).status).toBe(200);

    const after = (await serverHistory(canonical, { limit: '100' })).body.data as any[];
    // The move itself is an entry of the surviving customer's history, once per subscription moved.
    expect(after.filter((e) => e.type === 'subscription.transferred')).toEqual([
      expect.objectContaining({ subscriptionId: ofMerged.sub.id, railEventId: null, details: { fromServiceCustomerId: merged } }),
    ]);
    const lifecycleEntries = after.filter((e) => e.type !== 'subscription.transferred');
    expect(lifecycleEntries).toHaveLength(10);
    expect(lifecycleEntries.slice(0, 5).map((e) => e.subscriptionId)).toEqual(Array(5).fill(ofCanonical.sub.id));
    expect(lifecycleEntries.slice(5)).toEqual(before);
    expect(await allPages((q) => operatorHistory(canonical, q), 3)).toEqual(after);
    expect((await serverHistory(merged)).body).toEqual({ object: 'list', data: [], hasMore: false });
  });

  it("a store-only customer folded into a named one brings its history: the named customer's holds the events from before", async () => {
    const t0 = now();
    const sub = subscription({ periodEnd: t0 + 30 * DAY });
    const started = await send(event('customer.subscription.created', sub, { created: t0 }));
    const storeOnly = started.body.serviceCustomerId as string;
    expect((await serverHistory(storeOnly)).body.data.map((e: any) => e.type)).toEqual(['subscription.started']);

    const userId = uid('user');
    const named: string = (
      await h.t.http
        .post('/v1/identify')
        .set(keyHeaders(h.fx, h.fx.keys.pubTest))
        .send({ userId, anonymousId: uid('anon') })
    ).body.serviceCustomerId;
    const canceled = await send(
      event('customer.subscription.updated', { ...sub, cancel_at_period_end: true, metadata: { developerUserId: userId } }, { created: t0 + 1 }),
    );
    expect(canceled.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: named }));
    const history = (await serverHistory(named)).body.data as any[];
    expect(history.filter((e) => e.type === 'subscription.transferred')).toEqual([
      expect.objectContaining({ subscriptionId: sub.id, details: { fromServiceCustomerId: storeOnly } }),
    ]);
    const lifecycleEntries = history.filter((e) => e.type !== 'subscription.transferred');
    expect(lifecycleEntries.map((e) => [e.type, e.subscriptionId])).toEqual([
      ['subscription.canceled', sub.id],
      ['subscription.started', sub.id],
    ]);
    expect(lifecycleEntries[1].auditEventId).toBe(started.body.auditEventId);
  });
});
