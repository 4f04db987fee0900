import { randomUUID } from 'node:crypto';
import { EventIdentityResolver } from '#telemetry';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

/**
 * The customer census, the ranked customer book and crossmatch through HTTP: customers made by
 * signed card notifications (with prices), read with the scopes of the read API.
 */
describe('reporting: GET /v1/customers, /v1/customers/ranked, /v1/crossmatch', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  let t: TestApp;
  let fx: ProjectFixture;
  let identityKey: string;
  const { now, event, send } = h;

  const priced = (amount: number, o: { userId?: string; customer?: string; currency?: string } = {}) => ({
    id: uid('sub'),
    object: 'subscription',
    customer: o.customer ?? uid('cus'),
    status: 'active',
    cancel_at_period_end: false,
    metadata: o.userId ? { developerUserId: o.userId } : {},
    items: {
      object: 'list',
      data: [
        {
          id: uid('si'),
          object: 'subscription_item',
          current_period_end: now() + 30 * 86400,
          quantity: 1,
          price: {
            id: uid('price'),
            product: 'prod_pro',
            unit_amount: amount,
            currency: o.currency ?? 'usd',
            recurring: { interval: 'month', interval_count: 1 },
          },
        },
      ],
    },
  });

  let big: { customer: string; userId: string; serviceCustomerId: string };
  let small: { customer: string; userId: string; serviceCustomerId: string };
  let freeCustomerId: string;

  beforeAll(async () => {
    ({ t, fx } = h);
    const made = [];
    for (const [amount, userId] of [
      [5000, `user_big_${uid('u')}`],
      [1500, `user_small_${uid('u')}`],
    ] as const) {
      const sub = priced(amount, { userId });
      const res = await send(event('customer.subscription.created', sub));
      expect(res.body.decision).toBe('applied');
      made.push({ customer: sub.customer, userId, serviceCustomerId: res.body.serviceCustomerId });
    }
    [big, small] = made;
    const identify = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ userId: `user_free_${uid('u')}`, anonymousId: `anon_${uid('a')}` });
    expect(identify.status).toBe(200);
    freeCustomerId = identify.body.serviceCustomerId ?? identify.body.crossdeckCustomerId;
    const rotated = await t.http
      .post(`/admin/v1/keys/${fx.keyIds.skTest}/rotate`)
      .set(operatorAuth())
      .send({ scopes: ['reporting:aggregate', 'reporting:identity', 'crossmatch:read'] });
    expect(rotated.status).toBe(201);
    identityKey = rotated.body.key.key;
  });

  const get = (path: string, query: Record<string, string | number> = {}, key = identityKey) => t.http.get(path).query(query).set(keyHeaders(fx, key));

  it('the census: paying from the ledger, total customers, private no-store', async () => {
    const res = await get('/v1/customers');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body.object).toBe('customers');
    expect(res.body.data).toEqual({ payingCustomers: 2, totalCustomers: 3, activePeople: null });
    expect(res.body.meta.coverage.revenue.state).toBe('measured');
    expect(res.body.meta.coverage.userCensus.state).toBe('measured');
  });

  it('ranked by mrr: paying first by revenue, own identifiers only; segments and limits', async () => {
    const res = await get('/v1/customers/ranked', { by: 'mrr' });
    expect(res.status).toBe(200);
    expect(res.body.data.rows).toEqual([
      {
        userId: big.userId,
        serviceCustomerId: big.serviceCustomerId,
        crossdeckCustomerId: big.serviceCustomerId,
        monthlyRevenueCents: 5000,
        paying: true,
        readCost: null,
      },
      {
        userId: small.userId,
        serviceCustomerId: small.serviceCustomerId,
        crossdeckCustomerId: small.serviceCustomerId,
        monthlyRevenueCents: 1500,
        paying: true,
        readCost: null,
      },
      expect.objectContaining({ serviceCustomerId: freeCustomerId, monthlyRevenueCents: 0, paying: false }),
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/email|firstName/);
    expect((await get('/v1/customers/ranked', { by: 'mrr', segment: 'paying', limit: 1 })).body.data.rows.map((r: any) => r.serviceCustomerId)).toEqual([
      big.serviceCustomerId,
    ]);
    expect((await get('/v1/customers/ranked', { by: 'mrr', segment: 'non_paying' })).body.data.rows.map((r: any) => r.serviceCustomerId)).toEqual([
      freeCustomerId,
    ]);
    const byReadCost = await get('/v1/customers/ranked');
    expect(byReadCost.body.meta.coverage.readCost).toEqual({ state: 'not_instrumented', since: null });
    expectError(await get('/v1/customers/ranked', { by: 'email' }), 400, 'invalid_param_value');
    expectError(await get('/v1/customers/ranked', { limit: 101 }), 400, 'invalid_param_value');
    expectError(await get('/v1/customers/ranked', { days: 91 }), 400, 'invalid_param_value');
  });

  it('crossmatch: any one identifier resolves to the same customer with its revenue and entitlements', async () => {
    const queries: Record<string, string>[] = [{ stripeCustomerId: big.customer }, { userId: big.userId }, { customerId: big.serviceCustomerId }];
    for (const query of queries) {
      const res = await get('/v1/crossmatch', query);
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('crossmatch');
      expect(res.body.data).toEqual({
        customer: { serviceCustomerId: big.serviceCustomerId, crossdeckCustomerId: big.serviceCustomerId, userId: big.userId },
        revenue: { paying: true, monthlyCents: 5000 },
        entitlements: { active: 2, keys: ['cloud_sync', 'pro'] },
        readCost: { reads: null, windowDays: 30 },
      });
    }
    const none = await get('/v1/crossmatch', { stripeCustomerId: 'cus_unknown' });
    expect(none.status).toBe(200);
    expect(none.body.data.customer).toBeNull();
    expect(none.body.data.revenue).toEqual({ paying: false, monthlyCents: 0 });
  });

  it('crossmatch takes exactly one identifier, named in the error', async () => {
    const missing = await get('/v1/crossmatch');
    expectError(missing, 400, 'missing_required_param');
    expect(missing.body.error.message).toContain('appleOriginalTransactionId');
    const two = await get('/v1/crossmatch', { userId: big.userId, stripeCustomerId: big.customer });
    expectError(two, 400, 'invalid_param_value');
    expect(two.body.error.message).toContain('stripeCustomerId');
  });

  it('read cost from the bucket reports: ranked by read_cost within a segment, and in crossmatch', async () => {
    const today = new Date(t.clock.nowMs()).toISOString().slice(0, 10);
    const report = await t.http
      .post('/v1/buckets/report')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({
        date: today,
        byLabel: { feed: { read: 1000 } },
        byActor: { [small.userId]: { read: 700 }, [big.userId]: { read: 200 }, anonymous: { read: 100 } },
      });
    expect(report.status).toBe(202);
    const ranked = await get('/v1/customers/ranked', { by: 'read_cost', days: 7 });
    expect(ranked.status).toBe(200);
    expect(ranked.body.meta.coverage.readCost.state).toBe('measured');
    expect(ranked.body.data.rows.map((r: any) => [r.serviceCustomerId, r.readCost, r.monthlyRevenueCents])).toEqual([
      [small.serviceCustomerId, 700, 1500],
      [big.serviceCustomerId, 200, 5000],
    ]);
    const byMrr = await get('/v1/customers/ranked', { by: 'mrr', segment: 'paying' });
    expect(byMrr.body.data.rows.map((r: any) => r.readCost)).toEqual([200, 700]);
    expect((await get('/v1/customers/ranked', { by: 'read_cost', segment: 'non_paying' })).body.data.rows).toEqual([]);
    const match = await get('/v1/crossmatch', { userId: small.userId });
    expect(match.body.data.readCost).toEqual({ reads: 700, windowDays: 30 });
  });

  it('scopes and keys: aggregate keys cannot read identities; publishable keys are 401; another project is 403', async () => {
    expectError(await get('/v1/customers/ranked', {}, fx.keys.skTest), 403, 'insufficient_scope');
    expectError(await get('/v1/crossmatch', { userId: big.userId }, fx.keys.skTest), 403, 'insufficient_scope');
    expect((await get('/v1/customers', {}, fx.keys.skTest)).status).toBe(200);
    expectError(await get('/v1/customers', {}, fx.keys.pubTest), 401, 'invalid_api_key');
    const other = await createProjectWithApp(t);
    expectError(await get('/v1/customers', { project: other.projectId }), 403, 'project_not_allowed');
    // Without a rail the census still counts customers; paying is null (not instrumented).
    const bare = await get('/v1/customers', {}, other.keys.skTest).set(keyHeaders(other, other.keys.skTest));
    expect(bare.body.data).toEqual({ payingCustomers: null, totalCustomers: 0, activePeople: null });
  });

  it('active people: distinct customers with an event in 30 days, from the rollup the identity resolver feeds', async () => {
    const event = (developerUserId: string) => ({ name: 'screen.viewed', eventId: randomUUID(), timestamp: t.clock.nowMs() - 1000, developerUserId });
    const sent = await t.http
      .post('/v1/events')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ events: [event(big.userId), event(big.userId), event(small.userId), event('user_nobody')] });
    expect(sent.status).toBe(202);
    await t.app.get(EventIdentityResolver).runOnce();
    const res = await get('/v1/customers');
    expect(res.body.data).toEqual({ payingCustomers: 2, totalCustomers: 3, activePeople: 2 });
    expect(res.body.meta.coverage.analytics.state).toBe('measured');
    // 31 days later (the last test: the clock moves past the subscriptions' periods) both fell out of the window.
    expect(
      (
        await t.http
          .post('/admin/v1/test-clock/advance')
          .set(operatorAuth())
          .send({ seconds: 31 * 86400 })
      ).status,
    ).toBe(200);
    expect((await get('/v1/customers')).body.data.activePeople).toBe(0);
    // A new event the next day counts its customer again (its resolved hint set is resolved once more).
    await t.http
      .post('/v1/events')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ events: [event(small.userId)] });
    await t.app.get(EventIdentityResolver).runOnce();
    expect((await get('/v1/customers')).body.data.activePeople).toBe(1);
  });
});
