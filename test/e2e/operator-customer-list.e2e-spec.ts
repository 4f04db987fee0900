import { type LifecycleSubscriptionOptions, lifecycleCardSubscription } from '../support/card-events.js';
import { randomUUID } from 'node:crypto';
import { Sql } from '#platform';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { seedRailSubscription, type SeededRailSubscription } from '../support/factories/subscriptions.js';
import { seedActiveDays, seedCustomerRevenue, seedCustomerRevenues, seedCustomers, seedLastActiveDays } from '../support/factories/revenue.js';
import { linkCardCustomer } from '../support/factories/rails.js';
import { testScope } from '../support/scopes.js';

interface Item {
  serviceCustomerId: string;
  userId: string | null;
  email: string | null;
  mrr: { amountMinor: number; currency: string };
  paying: boolean;
  lastSeenDay: string | null;
  rails: string[];
  products: string[];
  states: string[];
  createdAt: number;
}

describe('operator customer list: partial search, filters, sorting, cursor pages and the CSV export', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  const tag = () => randomUUID().replace(/-/g, '').slice(0, 10);
  const list = (query: Record<string, string>, fx = p) =>
    t.http
      .get(`/admin/v1/projects/${fx.projectId}/customers`)
      .query({ env: 'sandbox', match: 'partial', ...query })
      .set(operatorAuth());
  const ids = (body: { data: Item[] }) => body.data.map((d) => d.serviceCustomerId);

  async function identify(fx: ProjectFixture, userId: string, email?: string): Promise<string> {
    const res = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ userId, anonymousId: `anon_${tag()}`, ...(email ? { email } : {}) });
    expect(res.status).toBe(200);
    return res.body.serviceCustomerId;
  }

  const sandbox = (fx: ProjectFixture) => testScope(fx.projectId);
  const subscription = (fx: ProjectFixture, customerId: string, o: SeededRailSubscription) => seedRailSubscription(t.dataSource, sandbox(fx), customerId, o);
  const mrr = (fx: ProjectFixture, customerId: string, minor: number, currency = 'USD') =>
    seedCustomerRevenue(t.dataSource, sandbox(fx), customerId, minor, currency);

  describe('search', () => {
    it('matches a prefix of the user id, the cdcust_ id and rail ids, and any part of the email, case-insensitively', async () => {
      const fx = await createProjectWithApp(t);
      const k = tag();
      const c = await identify(fx, `User_${k}_alpha`, `Jane.${k}@Example.com`);
      const noise = await identify(fx, `other_${tag()}`, `someone_${tag()}@example.org`);
      const txn = `2000000${k}`;
      const purchaseToken = `PurchaseTok${k}xyz`;
      await subscription(fx, c, { rail: 'card_payments', id: `sub_${k}Card` });
      await subscription(fx, c, { rail: 'ios_store', id: txn });
      await subscription(fx, c, { rail: 'android_store', id: purchaseToken });
      const cardCustomer = `cus_${k}Z`;
      await linkCardCustomer(t.dataSource, sandbox(fx), cardCustomer, c);
      for (const q of [
        `user_${k}`, // prefix of the user id, other case
        `USER_${k}_AL`,
        `JANE.${k}@EXAMPLE.COM`, // the email upper-cased
        `${k}@example`, // any part of it
        c.slice(0, 12).toUpperCase(), // prefix of the cdcust_ id
        `SUB_${k.toUpperCase()}`, // card subscription id
        txn.slice(0, 10), // original transaction id
        purchaseToken.slice(0, 14).toLowerCase(),
        cardCustomer.slice(0, 8).toUpperCase(),
      ]) {
        const res = await list({ q }, fx);
        expect(res.status).toBe(200);
        expect(ids(res.body)).toContain(c);
        if (q !== c.slice(0, 12).toUpperCase()) expect(ids(res.body)).not.toContain(noise);
      }
      const hit = (await list({ q: `user_${k}` }, fx)).body;
      expect(hit).toMatchObject({ object: 'list', env: 'sandbox', hasMore: false, nextCursor: null });
      expect(hit.data[0]).toMatchObject({
        serviceCustomerId: c,
        userId: `User_${k}_alpha`,
        email: `Jane.${k}@Example.com`,
        rails: ['android_store', 'card_payments', 'ios_store'],
      });
      // Prefix, not substring, for ids; LIKE wildcards are literal.
      expect((await list({ q: `${k}_alpha` }, fx)).body.data).toEqual([]);
      expect((await list({ q: '%' }, fx)).body.data).toEqual([]);
      expect((await list({ q: '_' }, fx)).body.data).toEqual([]);
      // Tenant-scoped: the other project and the other environment find nothing.
      expect((await list({ q: `user_${k}` }, other)).body.data).toEqual([]);
      expect((await list({ q: `user_${k}`, env: 'production' }, fx)).body.data).toEqual([]);
    });

    it('keeps the exact search as it was when no list parameter is given', async () => {
      const k = tag();
      const c = await identify(p, `exact_${k}`);
      const exact = await t.http
        .get(`/admin/v1/projects/${p.projectId}/customers`)
        .query({ env: 'sandbox', q: `exact_${k}` })
        .set(operatorAuth());
      expect(exact.body.data).toEqual([expect.objectContaining({ serviceCustomerId: c, matchedBy: 'user_id' })]);
      const prefix = await t.http
        .get(`/admin/v1/projects/${p.projectId}/customers`)
        .query({ env: 'sandbox', q: `exact_${k.slice(0, 4)}` })
        .set(operatorAuth());
      expect(prefix.body.data).toEqual([]);
      expectError(await t.http.get(`/admin/v1/projects/${p.projectId}/customers`).set(operatorAuth()), 400, 'missing_required_param');
    });
  });

  describe('filters and sorting', () => {
    let fx: ProjectFixture;
    const c: Record<string, string> = {};
    beforeAll(async () => {
      fx = await createProjectWithApp(t);
      for (const name of ['trialing', 'active', 'billing', 'paused', 'churned', 'refunded', 'none', 'mixed', 'hold'])
        c[name] = await identify(fx, `${name}_${tag()}`);
      await subscription(fx, c.trialing!, { raw: 'trialing', product: 'price_trial' });
      await subscription(fx, c.active!, { rail: 'ios_store', id: `1000${tag()}`, raw: 'DID_RENEW', product: 'com.app.pro' });
      await subscription(fx, c.billing!, { rail: 'android_store', raw: 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD' });
      await subscription(fx, c.paused!, { raw: 'paused' });
      await subscription(fx, c.churned!, { state: 'inactive', raw: 'canceled' });
      await subscription(fx, c.refunded!, { rail: 'ios_store', id: `1000${tag()}`, state: 'inactive', raw: 'REFUND' });
      await subscription(fx, c.mixed!, { state: 'inactive', raw: 'canceled' });
      await subscription(fx, c.mixed!, { raw: 'active' });
      await subscription(fx, c.hold!, { state: 'inactive', raw: 'SUBSCRIPTION_STATE_ON_HOLD' });
      await mrr(fx, c.active!, 999);
      await mrr(fx, c.trialing!, 100, 'EUR');
      await mrr(fx, c.mixed!, 4999);
      await mrr(fx, c.billing!, 1999);
      await seedActiveDays(t.dataSource, sandbox(fx), c.paused!, ['2026-01-05', '2026-03-01']);
      await seedActiveDays(t.dataSource, sandbox(fx), c.none!, ['2026-02-01']);
    });

    it('records without a lifecycle state: the state their status word names; expired only without anything else; the earlier words still filter', async () => {
      const expected: Record<string, string[]> = {
        trialing: [c.trialing!],
        active: [c.active!, c.mixed!],
        billing_issue: [c.billing!, c.hold!],
        in_grace_period: [c.billing!],
        on_hold: [c.hold!],
        in_billing_retry: [],
        paused: [c.paused!],
        churned: [c.churned!],
        expired: [c.churned!],
        refunded: [c.refunded!],
      };
      for (const [state, want] of Object.entries(expected)) {
        const res = await list({ state }, fx);
        expect(res.status).toBe(200);
        expect(ids(res.body).sort()).toEqual([...want].sort());
      }
      const all = (await list({}, fx)).body.data as Item[];
      const states = Object.fromEntries(all.map((d) => [d.serviceCustomerId, d.states]));
      expect(states[c.mixed!]).toEqual(['active']);
      expect(states[c.churned!]).toEqual(['expired']);
      expect(states[c.billing!]).toEqual(['in_grace_period']);
      expect(states[c.hold!]).toEqual(['on_hold']);
      expect(states[c.none!]).toEqual([]);
    });

    it('filters by rail, product and paying', async () => {
      expect(ids((await list({ rail: 'ios_store' }, fx)).body).sort()).toEqual([c.active!, c.refunded!].sort());
      expect(ids((await list({ rail: 'android_store' }, fx)).body)).toEqual([c.billing!]);
      expect(ids((await list({ product: 'com.app.pro' }, fx)).body)).toEqual([c.active!]);
      expect(ids((await list({ paying: 'true' }, fx)).body).sort()).toEqual([c.active!, c.trialing!, c.mixed!, c.billing!].sort());
      expect(ids((await list({ paying: 'false' }, fx)).body)).not.toContain(c.active!);
      expect(ids((await list({ paying: 'true', rail: 'card_payments', state: 'active' }, fx)).body)).toEqual([c.mixed!]);
    });

    it('sorts by MRR, last seen and created, either way, ties by id', async () => {
      const byMrr = (await list({ sort: 'mrr' }, fx)).body.data as Item[];
      expect(byMrr.slice(0, 3).map((d) => d.serviceCustomerId)).toEqual([c.mixed, c.billing, c.active]);
      expect(byMrr[0]!.mrr).toEqual({ amountMinor: 4999, currency: 'USD' });
      const zero = byMrr.slice(3).map((d) => d.serviceCustomerId);
      expect(zero).toEqual([...zero].sort().reverse());
      const trialing = byMrr.find((d) => d.serviceCustomerId === c.trialing)!;
      expect(trialing).toMatchObject({ paying: true, mrr: { amountMinor: 0, currency: 'USD' } });
      const asc = (await list({ sort: 'mrr', order: 'asc' }, fx)).body.data as Item[];
      expect(asc.map((d) => d.serviceCustomerId)).toEqual(byMrr.map((d) => d.serviceCustomerId).reverse());
      const seen = (await list({ sort: 'last_seen' }, fx)).body.data as Item[];
      expect(seen.slice(0, 2).map((d) => [d.serviceCustomerId, d.lastSeenDay])).toEqual([
        [c.paused, '2026-03-01'],
        [c.none, '2026-02-01'],
      ]);
      const created = (await list({ sort: 'created', order: 'asc' }, fx)).body.data as Item[];
      expect(created.map((d) => d.serviceCustomerId)).toEqual(Object.values(c));
      expect(ids((await list({}, fx)).body)).toEqual(Object.values(c).reverse());
    });

    it('names the parameter at fault', async () => {
      for (const [query, name] of [
        [{ state: 'canceled' }, 'state'],
        [{ rail: 'paypal' }, 'rail'],
        [{ paying: 'yes' }, 'paying'],
        [{ sort: 'name' }, 'sort'],
        [{ order: 'up' }, 'order'],
        [{ cursor: 'not-a-cursor' }, 'cursor'],
        [{ match: 'fuzzy' }, 'match'],
        [{ limit: '101' }, 'limit'],
      ] as [Record<string, string>, string][]) {
        const res = await list(query, fx);
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain(name);
      }
      expectError(await list({}, { ...fx, projectId: 'proj_nope' }), 404, 'resource_missing');
      expect((await t.http.get(`/admin/v1/projects/${fx.projectId}/customers?match=partial`)).status).toBe(401);
    });
  });

  describe('many customers', () => {
    const N = 2500;
    let fx: ProjectFixture;
    beforeAll(async () => {
      fx = await createProjectWithApp(t);
      // Groups of 50 share one created_at and every 7th pays: ties everywhere, broken by id; five emails a spreadsheet would misread.
      const bulk = (i: number) => `cdcust_bulk${String(i).padStart(5, '0')}`;
      const tricky: Record<string, string> = {
        cdcust_bulk00001: '=HYPERLINK("http://evil")@x.com',
        cdcust_bulk00002: '+1@x.com',
        cdcust_bulk00003: '-2@x.com',
        cdcust_bulk00004: '@3@x.com',
        cdcust_bulk00005: 'a,"b"\nc@x.com',
      };
      const numbers = Array.from({ length: N }, (_, k) => k + 1);
      await seedCustomers(
        t.dataSource,
        sandbox(fx),
        numbers.map((i) => ({
          id: bulk(i),
          email: tricky[bulk(i)] ?? `bulk${i}@example.com`,
          createdAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 50) * 60_000),
        })),
      );
      await seedCustomerRevenues(
        t.dataSource,
        sandbox(fx),
        numbers.filter((i) => i % 7 === 0).map((i) => ({ customerId: bulk(i), monthlyMinor: 100 * ((i % 3) + 1) })),
      );
    });

    async function walk(query: Record<string, string>): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const res = await list({ limit: '100', ...query, ...(cursor ? { cursor } : {}) }, fx);
        expect(res.status).toBe(200);
        seen.push(...ids(res.body));
        cursor = res.body.nextCursor;
        expect(res.body.hasMore).toBe(cursor !== null);
        if (!cursor) break;
      }
      return seen;
    }

    it.each([{}, { sort: 'created', order: 'asc' }, { sort: 'mrr' }, { sort: 'mrr', order: 'asc' }, { sort: 'last_seen' }])(
      'pages through every customer without duplicates or gaps (%p)',
      async (query) => {
        const seen = await walk(query as Record<string, string>);
        expect(seen).toHaveLength(N);
        expect(new Set(seen).size).toBe(N);
      },
    );

    it('pages a filtered list too', async () => {
      const paying = await walk({ paying: 'true', sort: 'mrr' });
      expect(paying).toHaveLength(Math.floor(N / 7));
      expect(new Set(paying).size).toBe(paying.length);
    });

    it('exports the whole filtered list as CSV, quoted and safe for spreadsheets', async () => {
      const res = await t.http
        .get(`/admin/v1/projects/${fx.projectId}/customers.csv`)
        .query({ env: 'sandbox' })
        .set(operatorAuth())
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (chunk: string) => (text += chunk));
          r.on('end', () => done(null, text));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="customers-sandbox\.csv"/);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const text = res.body as string;
      expect(text.startsWith('customer_id,user_id,email,states,rails,products,mrr_minor,currency,paying,last_seen_day,created_at\r\n')).toBe(true);
      const lines = text.split('\r\n').filter((l) => l !== '');
      // The header, N rows, one email with a line feed inside its quotes.
      expect(lines.length).toBe(N + 1);
      expect(text).toContain(`cdcust_bulk00001,,"'=HYPERLINK(""http://evil"")@x.com",,,,0,USD,false,,`);
      expect(text).toContain(`cdcust_bulk00002,,'+1@x.com,`);
      expect(text).toContain(`cdcust_bulk00003,,'-2@x.com,`);
      expect(text).toContain(`cdcust_bulk00004,,'@3@x.com,`);
      expect(text).toContain(`cdcust_bulk00005,,"a,""b""\nc@x.com",`);
      expect(text).toContain(`cdcust_bulk00007,,bulk7@example.com,,,,200,USD,true,,2026-01-01T00:00:00.000Z`);

      const filtered = await t.http
        .get(`/admin/v1/projects/${fx.projectId}/customers.csv`)
        .query({ env: 'sandbox', paying: 'true', q: 'BULK7' })
        .set(operatorAuth())
        .buffer(true)
        .parse((r, done) => {
          let body = '';
          r.setEncoding('utf8');
          r.on('data', (chunk: string) => (body += chunk));
          r.on('end', () => done(null, body));
        });
      const rows = (filtered.body as string)
        .split('\r\n')
        .filter((l) => l !== '')
        .slice(1);
      // Paying customers whose id or email starts or contains "bulk7": bulk7, bulk70.., bulk700.. divisible by 7.
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(Number(row.split(',')[0]!.slice('cdcust_bulk'.length)) % 7).toBe(0);
      expectError(await t.http.get(`/admin/v1/projects/${fx.projectId}/customers.csv?state=nope`).set(operatorAuth()), 400, 'invalid_param_value');
      expect((await t.http.get(`/admin/v1/projects/${fx.projectId}/customers.csv`)).status).toBe(401);
    });
  });

  describe('sorted by MRR and last seen across pages', () => {
    const N = 40;
    let fx: ProjectFixture;
    const id = (i: number) => `cdcust_ord${String(i).padStart(3, '0')}`;
    // Every 3rd pays in USD (amounts tie in fours), every 5th else only in EUR (paying, MRR 0);
    // every 2nd was seen (days tie in fours), the others never; every 6th has a card subscription.
    const usd = (i: number) => (i % 3 === 0 ? 100 * ((i % 4) + 1) : 0);
    const eur = (i: number) => i % 5 === 0 && i % 3 !== 0;
    const day = (i: number) => (i % 2 === 0 ? `2026-01-0${(i % 4) + 1}` : null);
    const card = (i: number) => i % 6 === 0;
    beforeAll(async () => {
      fx = await createProjectWithApp(t);
      await seedCustomers(
        t.dataSource,
        sandbox(fx),
        Array.from({ length: N }, (_, k) => ({ id: id(k + 1), createdAt: new Date(Date.UTC(2026, 0, 1) + (k + 1) * 60_000) })),
      );
      for (let i = 1; i <= N; i++) {
        if (usd(i) > 0) await mrr(fx, id(i), usd(i));
        if (eur(i)) await mrr(fx, id(i), 700, 'EUR');
        const d = day(i);
        if (d) await seedActiveDays(t.dataSource, sandbox(fx), id(i), ['2025-12-01', d]);
        if (card(i)) await subscription(fx, id(i), { raw: 'active' });
      }
    });

    /** The list's order as defined: the sort key, then the id, both the same way. */
    function expected(query: Record<string, string>): string[] {
      const key = (i: number) => (query.sort === 'mrr' ? usd(i) : day(i) ? Date.parse(day(i)!) : -1);
      const keep = (i: number) =>
        (query.paying === undefined || (usd(i) > 0 || eur(i)) === (query.paying === 'true')) &&
        (query.rail === undefined || card(i)) &&
        (query.state === undefined || card(i)) &&
        (query.q === undefined || id(i).startsWith(query.q));
      const rows = Array.from({ length: N }, (_, k) => k + 1).filter(keep);
      const sign = query.order === 'asc' ? 1 : -1;
      rows.sort((a, b) => sign * (key(a) - key(b) || (id(a) < id(b) ? -1 : 1)));
      return rows.map(id);
    }

    async function walk(query: Record<string, string>, limit: number): Promise<Item[]> {
      const seen: Item[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 50; pages++) {
        const res = await list({ limit: String(limit), ...query, ...(cursor ? { cursor } : {}) }, fx);
        expect(res.status).toBe(200);
        seen.push(...(res.body.data as Item[]));
        cursor = res.body.nextCursor;
        if (!cursor) break;
      }
      return seen;
    }

    const filters: Record<string, string>[] = [
      {},
      { paying: 'true' },
      { paying: 'false' },
      { rail: 'card_payments' },
      { state: 'active', paying: 'true' },
      { q: 'cdcust_ord01' },
    ];
    for (const sort of ['mrr', 'last_seen'])
      for (const order of ['desc', 'asc'])
        it(`pages by ${sort} ${order}: ties by id, customers without a key at the low end, under each filter`, async () => {
          for (const filter of filters) {
            const query = { sort, order, ...filter };
            for (const limit of [3, 7]) expect((await walk(query, limit)).map((d) => d.serviceCustomerId)).toEqual(expected(query));
          }
        });

    it('shows the key it sorts by on each row', async () => {
      for (const d of await walk({ sort: 'mrr' }, 100)) {
        const i = Number(d.serviceCustomerId.slice('cdcust_ord'.length));
        expect([d.mrr.amountMinor, d.paying, d.lastSeenDay]).toEqual([usd(i), usd(i) > 0 || eur(i), day(i)]);
      }
    });

    it('reads a sorted first page from the ranked index, not every customer of the scope', async () => {
      // A scope with volume and fresh statistics, so that EXPLAIN shows the plan production gets.
      const vol = await createProjectWithApp(t);
      const V = 20000;
      const volId = (i: number) => `cdcust_vol${String(i).padStart(6, '0')}`;
      const numbers = Array.from({ length: V }, (_, k) => k + 1);
      await seedCustomers(
        t.dataSource,
        sandbox(vol),
        numbers.map((i) => ({ id: volId(i), createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000) })),
      );
      await t.dataSource.query('ANALYZE customers');
      await seedCustomerRevenues(
        t.dataSource,
        sandbox(vol),
        numbers.filter((i) => i % 4 === 0).map((i) => ({ customerId: volId(i), monthlyMinor: 100 * ((i % 50) + 1) })),
      );
      await seedLastActiveDays(
        t.dataSource,
        sandbox(vol),
        numbers
          .filter((i) => i % 2 === 0)
          .map((i) => ({ customerId: volId(i), day: new Date(Date.UTC(2025, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10) })),
      );
      await t.dataSource.query('ANALYZE customers, revenue_customer_totals, reporting_active_last_days');
      const sql = t.app.get(Sql);
      const spy = jest.spyOn(sql, 'rows');
      try {
        for (const [sort, index] of [
          ['mrr', 'revenue_customer_totals_list_idx'],
          ['last_seen', 'reporting_active_last_days_list_idx'],
        ]) {
          spy.mockClear();
          expect((await list({ sort: sort!, limit: '25' }, vol)).status).toBe(200);
          const [text, params] = spy.mock.calls.find(([q]) => typeof q === 'string' && q.includes(' k\n'))! as [string, unknown[]];
          const plan = ((await t.dataSource.query(`EXPLAIN ${text}`, params)) as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
          expect(plan).toContain(`using ${index} on`);
          expect(plan).not.toMatch(/Seq Scan on (customers|revenue_customer_totals|reporting_active_last_days)/);
        }
      } finally {
        spy.mockRestore();
      }
    });
  });
});

/**
 * The list's states from the subscription lifecycle: signed card events move each record's
 * lifecycle state, which the state filter and each row's states read.
 */
describe('operator customer list: states of the subscription lifecycle', () => {
  const h = cardWebhookHarness();
  const { now, event, send } = h;
  const DAY = 86_400;
  const list = (query: Record<string, string>) =>
    h.t.http
      .get(`/admin/v1/projects/${h.fx.projectId}/customers`)
      .query({ env: 'sandbox', match: 'partial', ...query })
      .set(operatorAuth());
  const cardSub = (s: { id: string; customer: string }, o: LifecycleSubscriptionOptions) => lifecycleCardSubscription(s, o, uid);
  const ids = (body: { data: Item[] }) => body.data.map((d) => d.serviceCustomerId);
  const customers: Record<string, string> = {};

  beforeAll(async () => {
    const t0 = now();
    const applied = async (body: unknown) => {
      const res = await send(body);
      expect(res.body.decision).toBe('applied');
      return res.body.serviceCustomerId as string;
    };
    const start = async (name: string, o: Parameters<typeof cardSub>[1]) => {
      const s = { id: uid('sub'), customer: uid('cus') };
      customers[name] = await applied(event('customer.subscription.created', cardSub(s, o), { created: t0 }));
      return s;
    };
    await start('trialing', { status: 'trialing', start: t0, end: t0 + 7 * DAY, trialEnd: t0 + 7 * DAY });
    await start('active', { start: t0, end: t0 + 30 * DAY });
    const paused = await start('paused', { start: t0, end: t0 + 30 * DAY });
    await applied(
      event('customer.subscription.updated', cardSub(paused, { start: t0, end: t0 + 30 * DAY, pauseResumesAt: t0 + 60 * DAY }), { created: t0 + 1 }),
    );
    const expired = await start('expired', { start: t0, end: t0 + 30 * DAY });
    await applied(event('customer.subscription.deleted', cardSub(expired, { status: 'canceled', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    expect(
      (
        await h.t.http
          .put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`)
          .set(operatorAuth())
          .send({ accountId: 'acct_test_1', gracePeriodDays: 3 })
      ).status,
    ).toBe(200);
    const grace = await start('in_grace_period', { start: t0 - 30 * DAY, end: t0 });
    await applied(event('customer.subscription.updated', cardSub(grace, { status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    expect(
      (
        await h.t.http
          .put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`)
          .set(operatorAuth())
          .send({ accountId: 'acct_test_1', gracePeriodDays: 0 })
      ).status,
    ).toBe(200);
    const retry = await start('in_billing_retry', { start: t0 - 30 * DAY, end: t0 });
    await applied(event('customer.subscription.updated', cardSub(retry, { status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    const refunded = await start('refunded', { start: t0, end: t0 + 30 * DAY });
    const charge = uid('ch');
    await applied(
      event(
        'invoice.paid',
        {
          id: uid('in'),
          object: 'invoice',
          customer: refunded.customer,
          subscription: refunded.id,
          amount_paid: 999,
          currency: 'usd',
          charge,
          payment_intent: null,
          status_transitions: { paid_at: t0 },
          lines: { data: [{ period: { start: t0 } }] },
        },
        { created: t0 },
      ),
    );
    const dispute = { id: uid('dp'), object: 'dispute', amount: 999, currency: 'usd', charge, payment_intent: null, status: 'needs_response' };
    await applied(event('charge.dispute.created', dispute, { created: t0 + 2 }));
  });

  it('each row carries the lifecycle state of its subscription; the filter finds it, and the earlier words still do', async () => {
    const rows = (await list({ limit: '100' })).body.data as Item[];
    expect(Object.fromEntries(rows.map((r) => [r.serviceCustomerId, r.states]))).toEqual(
      Object.fromEntries(Object.entries(customers).map(([state, id]) => [id, [state]])),
    );
    for (const [state, id] of Object.entries(customers)) {
      const res = await list({ state });
      expect(res.status).toBe(200);
      expect([state, ids(res.body)]).toEqual([state, [id]]);
    }
    expect(ids((await list({ state: 'billing_issue' })).body).sort()).toEqual([customers.in_grace_period!, customers.in_billing_retry!].sort());
    expect(ids((await list({ state: 'churned' })).body)).toEqual([customers.expired!]);
    expect(ids((await list({ state: 'on_hold' })).body)).toEqual([]);
    // The export reads the same filter.
    const csv = await h.t.http
      .get(`/admin/v1/projects/${h.fx.projectId}/customers.csv`)
      .query({ env: 'sandbox', state: 'in_billing_retry' })
      .set(operatorAuth());
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n').filter((l) => l !== '')).toEqual([
      expect.stringMatching(/^customer_id,/),
      expect.stringContaining(`${customers.in_billing_retry},`),
    ]);
  });
});
