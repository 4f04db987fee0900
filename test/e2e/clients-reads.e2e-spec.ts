import { randomUUID } from 'node:crypto';
import { WEB_ORIGIN, createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

/**
 * The public clients' read requests, replayed exactly as each one sends them, against data made
 * through the real write paths (signed card notifications with prices, identify, page views and
 * errors through /v1/events, a bucket report): the CLI (`projects list`, `whoami`, `revenue`,
 * `analytics`, `errors`), the assistant connector's tools, the Node client's trust calls and
 * entitlement check, and the bucket reporter. Every field a client reads is asserted present,
 * with its type or value. The CLI and the connector hold a workspace key and send only
 * `project` (so they read production); the data is therefore written in production.
 */

const NODE_SDK = '@cross-deck/node@1.2.0';

/** The CLI (oauth/api.ts): the workspace token as a bearer, JSON, query values that are set. */
function cli(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}`, Accept: 'application/json' };
}

/** The connector (tools.ts cdGet): a bearer and Accept, nothing else. */
const connector = cli;

/** The Node client (http.ts): bearer secret key, version headers, a user agent. */
function nodeClient(key: string): Record<string, string> {
  return {
    Authorization: `Bearer ${key}`,
    'Crossdeck-Sdk-Version': NODE_SDK,
    'Crossdeck-Api-Version': '2025-01-01',
    'User-Agent': `${NODE_SDK.replace(/@(?=[^@]*$)/, '/')} node/20.10.0 linux`,
    Accept: 'application/json',
  };
}

/** The connector drops undefined and empty values before building the query string. */
function connectorQuery(params: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return s ? `?${s}` : '';
}

const num = expect.any(Number);
const str = expect.any(String);

describe('clients: the public CLI, connector, Node client and bucket reporter read what they expect', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  let wk: string;
  let aggregateWk: string;
  const { now, event, send } = h;

  const PAYING = `user_paying_${uid('u')}`;
  const PAYING_ANON = `anon_${randomUUID()}`;
  const FREE = `user_free_${uid('u')}`;
  const FREE_ANON = `anon_${randomUUID()}`;
  const BLOCKED = `user_blocked_${uid('u')}`;
  const FINGERPRINT = 'c0ffee12';
  const HOST = new URL('http://localhost:3000').hostname;
  let payingCustomerId: string;
  let freeCustomerId: string;
  let today: string;

  const priced = (amount: number, userId: string) => ({
    id: uid('sub'),
    object: 'subscription',
    customer: uid('cus'),
    status: 'active',
    cancel_at_period_end: false,
    metadata: { developerUserId: userId },
    items: {
      object: 'list',
      data: [
        {
          id: uid('si'),
          object: 'subscription_item',
          current_period_end: now() + 30 * 86400,
          quantity: 1,
          price: { id: uid('price'), product: 'prod_pro', unit_amount: amount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
        },
      ],
    },
  });

  const events = async (list: unknown[], key: string) => {
    const res = await t.http.post('/v1/events').set(keyHeaders(fx, key)).send({ events: list });
    expect(res.status).toBe(202);
  };
  const identify = async (userId: string, anonymousId: string) => {
    const res = await t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.pubLive)).send({ userId, anonymousId });
    expect(res.status).toBe(200);
    return res.body.serviceCustomerId as string;
  };

  beforeAll(async () => {
    ({ t, fx } = h);
    today = new Date(t.clock.nowMs()).toISOString().slice(0, 10);
    const roomy = { sustained: 10_000, burst: 10_000 };
    await setRateLimits(t, fx.projectId, { events: roomy, alias: roomy, entitlements: roomy });

    // A paying customer, from a signed live card notification carrying a price.
    const paid = await send(event('customer.subscription.created', priced(2900, PAYING), { livemode: true }));
    expect(paid.body.decision).toBe('applied');

    // First touches: the paying user arrived from an assistant, the free one from a search engine.
    const at = t.clock.nowMs();
    const view = (anonymousId: string, path: string, referrer: string, ts: number) => ({
      name: 'page.viewed',
      eventId: `pv_${randomUUID()}`,
      timestamp: ts,
      anonymousId,
      properties: { url: `http://${HOST}:3000${path}`, path, referrer },
    });
    await events(
      [
        view(PAYING_ANON, '/pricing', 'https://chatgpt.com/', at - 2000),
        view(FREE_ANON, '/', 'https://www.google.com/search', at - 1000),
        view(FREE_ANON, '/pricing', 'https://www.google.com/', at),
      ],
      fx.keys.pubLive,
    );
    payingCustomerId = await identify(PAYING, PAYING_ANON);
    freeCustomerId = await identify(FREE, FREE_ANON);

    // One error that hit the paying user twice and the free user once.
    const error = (userId: string, ts: number) => ({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: ts,
      level: 'error',
      developerUserId: userId,
      anonymousId: userId === PAYING ? PAYING_ANON : FREE_ANON,
      properties: { fingerprint: FINGERPRINT, message: 'boom', errorType: 'TypeError' },
    });
    await events([error(PAYING, at - 3000), error(PAYING, at - 2500), error(FREE, at - 1500)], fx.keys.skLive);

    // The operator's trust lists.
    const trust = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/trust`)
      .set(operatorAuth())
      .send({
        supportEmail: 'support@example.com',
        blocks: [
          { kind: 'email', value: 'bad@spam.example', reason: 'chargebacks' },
          { kind: 'user', value: BLOCKED, reason: 'abuse' },
        ],
      });
    expect(trust.status).toBe(200);

    // The workspace the CLI and connector sign in to: one with identity access, one aggregate-only.
    const ws = await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Replay' });
    expect(ws.status).toBe(201);
    expect((await t.http.post(`/admin/v1/workspaces/${ws.body.id}/projects/${fx.projectId}`).set(operatorAuth())).status).toBe(200);
    const scopes = ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read', 'reporting:identity', 'crossmatch:read'];
    const full = await t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({ name: 'connector', scopes });
    expect(full.status).toBe(201);
    wk = full.body.key;
    const aggregate = await t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({ name: 'cli' });
    expect(aggregate.status).toBe(201);
    aggregateWk = aggregate.body.key;
  });

  describe('bucket reporter (ReportSink.flush)', () => {
    it('the report body with lower-case headers and a secret key is 202, other resource units kept apart', async () => {
      const res = await t.http
        .post('/v1/buckets/report')
        .set({ 'content-type': 'application/json', authorization: `Bearer ${fx.keys.skLive}` })
        .send(
          JSON.stringify({
            date: today,
            byLabel: { 'home-feed': { read: 900, write: 4 }, 'col:posts': { read: 100, delete: 1, 'clickhouse.query_ms': 35 } },
            byHour: { '07': { read: 1000 } },
            byMinute: { '0745': { read: 12 } },
            byActor: { [PAYING]: { read: 700 }, anonymous: { read: 300 } },
            byActorLabel: { [`${PAYING}\u241fhome-feed`]: { read: 700 } },
          }),
        );
      expect(res.status).toBe(202);
    });
  });

  describe('bucket reporter: one report per flush window, its buffer cleared after each', () => {
    it("each window's counts are added to the day's (sandbox key, so the production reads below keep their figures)", async () => {
      const flush = (body: object) =>
        t.http
          .post('/v1/buckets/report')
          .set({ 'content-type': 'application/json', authorization: `Bearer ${fx.keys.skTest}` })
          .send(JSON.stringify(body));
      const windows = [
        { date: today, byLabel: { 'home-feed': { read: 60 } }, byHour: { '07': { read: 60 } }, byMinute: { '0700': { read: 60 } } },
        { date: today, byLabel: { 'home-feed': { read: 25, write: 1 } }, byHour: { '07': { read: 25 } }, byMinute: { '0705': { read: 25 } } },
        { date: today, byLabel: { 'col:posts': { read: 15 } }, byHour: { '08': { read: 15 } }, byMinute: { '0800': { read: 15 } } },
      ];
      for (const body of windows) expect((await flush(body)).status).toBe(202);
      const res = await t.http.get('/v1/buckets').set(cli(fx.keys.skTest));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(
        expect.objectContaining({
          reads: 100,
          writes: 1,
          byOperation: [
            { label: 'home-feed', reads: 85 },
            { label: 'col:posts', reads: 15 },
          ],
        }),
      );
    });
  });

  describe('bucket reporter in the browser (WebReportSink.flush)', () => {
    it("the page's preflight and its keepalive POST with the web app's publishable key: 202, readable cross-origin", async () => {
      const preflight = await t.http
        .options('/v1/buckets/report')
        .set({ Origin: WEB_ORIGIN, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      const res = await t.http
        .post('/v1/buckets/report')
        .set({ Origin: WEB_ORIGIN, 'content-type': 'application/json', authorization: `Bearer ${fx.keys.pubLive}` })
        .send(JSON.stringify({ date: today, byLabel: { 'home-feed': { read: 0 } } }));
      expect(res.status).toBe(202);
      expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
    });
  });

  describe('CLI', () => {
    it('projects list, login and whoami: GET /v1/workspace/projects, projects[].project, name, platforms', async () => {
      const res = await t.http.get('/v1/workspace/projects').set(cli(aggregateWk));
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body.data.projects)).toBe(true);
      expect(res.body.data.projects).toEqual([{ project: fx.projectId, id: fx.projectId, name: str, platforms: ['web'] }]);
    });

    it('revenue: GET /v1/revenue?project=, currency and current.{mrrCents, payingCustomers, byRail, cash, shape}', async () => {
      const res = await t.http.get('/v1/revenue').query({ project: fx.projectId }).set(cli(aggregateWk));
      expect(res.status).toBe(200);
      const { currency, current } = res.body.data;
      expect(currency).toBe('USD');
      expect(current).toEqual(
        expect.objectContaining({
          mrrCents: 2900,
          payingCustomers: 1,
          recognisedCashThisMonthCents: num,
          recognisedCashThisMonthByShape: { recurring: num, oneOff: num },
        }),
      );
      // The by-rail line prints only the rails whose value is a number.
      const printed = Object.entries(current.byRail).filter(([, v]) => typeof v === 'number');
      expect(printed).toEqual([
        ['ios_store', 0],
        ['card_payments', 2900],
        ['android_store', 0],
      ]);
      expect(current.byRailDetail.card_payments).toEqual({ mrrCents: 2900, payingCustomers: 1, activeTrials: 0 });
      expect(res.body.data.byRail).toEqual(current.byRail);
    });

    it('analytics: GET /v1/acquisition?project=, sources[].source and signups, highest first', async () => {
      const res = await t.http.get('/v1/acquisition').query({ project: fx.projectId }).set(cli(aggregateWk));
      expect(res.status).toBe(200);
      expect(res.body.data.sources).toEqual(
        expect.arrayContaining([
          { source: 'chatgpt.com', signups: 1 },
          { source: 'www.google.com', signups: 1 },
        ]),
      );
      expect(res.body.data.sources).toHaveLength(2);
      expect(res.body.data.coverage).toEqual({ state: 'measured', since: num });
    });

    it('analytics and errors on an app without page views or a rail: data.coverage says not_instrumented, not zero', async () => {
      const bare = await createProjectWithApp(t);
      const acquisition = await t.http.get('/v1/acquisition').set(cli(bare.keys.skLive));
      expect(acquisition.status).toBe(200);
      expect(acquisition.body.data.coverage).toEqual({ state: 'not_instrumented', since: null });
      const error = {
        name: 'error.unhandled',
        eventId: `err_${randomUUID()}`,
        timestamp: t.clock.nowMs(),
        level: 'error',
        developerUserId: 'u1',
        anonymousId: `anon_${randomUUID()}`,
        properties: { fingerprint: FINGERPRINT, message: 'boom', errorType: 'TypeError' },
      };
      expect(
        (
          await t.http
            .post('/v1/events')
            .set(keyHeaders(bare, bare.keys.skLive))
            .send({ events: [error] })
        ).status,
      ).toBe(202);
      const impact = await t.http.get('/v1/errors').query({ fingerprint: FINGERPRINT }).set(cli(bare.keys.skLive));
      expect(impact.body.data).toEqual(
        expect.objectContaining({ affected: { users: 1, payingUsers: null }, coverage: { state: 'not_instrumented', since: null } }),
      );
    });

    it('errors --issue: GET /v1/errors?project=&fingerprint=, the impact fields the command prints', async () => {
      const res = await t.http.get('/v1/errors').query({ project: fx.projectId, fingerprint: FINGERPRINT }).set(cli(aggregateWk));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        fingerprint: FINGERPRINT,
        exceptionType: 'TypeError',
        status: str,
        level: 'error',
        occurrences: 3,
        affected: { users: 2, payingUsers: 1 },
        firstSeen: num,
        lastSeen: num,
        // coverageNote(data.coverage): revenue is measured, so payingUsers is a real figure.
        coverage: { state: 'measured', since: num },
      });
      const unknown = await t.http.get('/v1/errors').query({ project: fx.projectId, fingerprint: 'ffffffff' }).set(cli(aggregateWk));
      expect(unknown.status).toBe(200);
      expect(unknown.body.data).toBeNull();
    });
  });

  describe('connector tools', () => {
    const tool = (path: string, params: Record<string, string | number | undefined> = {}, key = wk) =>
      t.http.get(`${path}${connectorQuery(params)}`).set(connector(key));
    const ok = async (path: string, params: Record<string, string | number | undefined> = {}, key = wk) => {
      const res = await tool(path, params, key);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual(expect.objectContaining({ project: fx.projectId, env: 'production', coverage: expect.any(Object) }));
      return res.body.data;
    };

    it('list_projects: { id, name } per app', async () => {
      const res = await tool('/v1/workspace/projects');
      expect(res.status).toBe(200);
      expect(res.body.data.projects).toEqual([expect.objectContaining({ id: fx.projectId, name: str })]);
    });

    it('workspace coverage (no public client yet): coverage.revenue / readCost / analytics / userCensus per app', async () => {
      const res = await tool('/v1/workspace/coverage');
      expect(res.status).toBe(200);
      const [row] = res.body.data.projects;
      expect(row.project).toBe(fx.projectId);
      for (const surface of ['revenue', 'readCost', 'analytics', 'userCensus']) expect(row.coverage[surface]).toBeDefined();
      expect(JSON.stringify(row.coverage.revenue)).toContain('measured');
    });

    it('get_revenue with granularity=day&days=56: MRR, paying, byRail and a daily series oldest first', async () => {
      const data = await ok('/v1/revenue', { project: fx.projectId, granularity: 'day', days: 56 });
      expect(data).toEqual(expect.objectContaining({ mrrCents: 2900, payingCustomers: 1 }));
      expect(data.byRail).toEqual(expect.objectContaining({ card_payments: 2900 }));
      expect(data.byRailDetail).toEqual(expect.objectContaining({ card_payments: { mrrCents: 2900, payingCustomers: 1, activeTrials: 0 } }));
      expect(data.series).toHaveLength(56);
      expect(data.series[55]).toEqual({ date: today, mrrCents: 2900, payingCustomers: 1, refundsCents: 0 });
      expect(data.series[0].date < data.series[55].date).toBe(true);
    });

    it('customers (no public client yet): payingCustomers, totalCustomers, activePeople', async () => {
      const data = await ok('/v1/customers', { project: fx.projectId });
      expect(data.payingCustomers).toBe(1);
      expect(data.totalCustomers).toBe(2);
      expect('activePeople' in data).toBe(true);
    });

    it('get_read_cost: reads split per user and overhead, attributedActors, by operation', async () => {
      const data = await ok('/v1/buckets', { project: fx.projectId, days: undefined });
      expect(data).toEqual(expect.objectContaining({ reads: 1000, writes: 4, deletes: 1, perUserReads: 700, overheadReads: 300, attributedActors: 1 }));
      expect(data.byOperation).toEqual([
        { label: 'home-feed', reads: 900 },
        { label: 'col:posts', reads: 100 },
      ]);
    });

    it('get_error_impact: users, paying users, type, status, occurrences, first and last seen', async () => {
      const data = await ok('/v1/errors', { project: fx.projectId, fingerprint: FINGERPRINT });
      expect(data).toEqual(
        expect.objectContaining({ occurrences: 3, affected: { users: 2, payingUsers: 1 }, exceptionType: 'TypeError', firstSeen: num, lastSeen: num }),
      );
    });

    it('get_error_affected_users: own user id, monthly revenue and last hit, revenue at risk first', async () => {
      const data = await ok('/v1/errors/affected', { project: fx.projectId, fingerprint: FINGERPRINT, limit: 10 });
      expect(data.rows).toEqual([
        expect.objectContaining({ userId: PAYING, monthlyRevenueCents: 2900, lastHitAt: num }),
        expect.objectContaining({ userId: FREE, monthlyRevenueCents: 0, lastHitAt: num }),
      ]);
      expect(JSON.stringify(data)).not.toMatch(/@/);
    });

    it('customers ranked (no public client yet) by=read_cost&segment=paying: user id, monthly revenue, paying flag, read cost', async () => {
      const data = await ok('/v1/customers/ranked', { project: fx.projectId, by: 'read_cost', segment: 'paying', limit: 25, days: 30 });
      expect(data.rows).toEqual([
        expect.objectContaining({ userId: PAYING, crossdeckCustomerId: str, monthlyRevenueCents: 2900, paying: true, readCost: 700 }),
      ]);
      const byMrr = await ok('/v1/customers/ranked', { project: fx.projectId, by: 'mrr' });
      expect(byMrr.rows.map((r: { userId: string }) => r.userId)).toEqual([PAYING, FREE]);
    });

    it('revenue averages (no public client yet): ARPU, lifetime values, cash to date, paying base', async () => {
      const data = await ok('/v1/revenue/averages', { project: fx.projectId });
      expect(data).toEqual(
        expect.objectContaining({
          currency: 'USD',
          arpuCents: 2900,
          averageLifetimeValueCents: num,
          combinedLifetimeValueCents: num,
          recognisedCashToDateCents: num,
          payingCustomers: 1,
        }),
      );
    });

    it('acquisition with limit (no public client sends one yet): sources highest first', async () => {
      const data = await ok('/v1/acquisition', { project: fx.projectId, limit: 1 });
      expect(data.sources).toEqual([{ source: expect.stringMatching(/^(chatgpt\.com|www\.google\.com)$/), signups: 1 }]);
    });

    it('get_customer and open_moat_dashboard by userId, anonymousId or customerId: what they pay, entitlements, read cost', async () => {
      for (const by of [{ userId: PAYING }, { anonymousId: PAYING_ANON }, { customerId: payingCustomerId }]) {
        const data = await ok('/v1/crossmatch', { project: fx.projectId, ...by });
        expect(data.customer).toEqual(expect.objectContaining({ crossdeckCustomerId: payingCustomerId, userId: PAYING }));
        expect(data.revenue).toEqual({ paying: true, monthlyCents: 2900 });
        expect(data.entitlements).toEqual(expect.objectContaining({ active: num }));
        expect(data.readCost).toEqual(expect.objectContaining({ reads: 700, windowDays: num }));
      }
      const none = await ok('/v1/crossmatch', { project: fx.projectId, userId: 'user_nobody' });
      expect(none.customer).toBeNull();
    });

    it('get_host_analytics with granularity=day: totals and a daily series for a verified host', async () => {
      const data = await ok('/v1/reporting/metrics', { project: fx.projectId, host: HOST, granularity: 'day', days: 7 });
      expect(data.totals).toEqual({ uniqueVisitors: 2, views: 3 });
      expect(data.series).toEqual(expect.arrayContaining([{ date: today, uniqueVisitors: 2, views: 3 }]));
      const foreign = await tool('/v1/reporting/metrics', { project: fx.projectId, host: 'other.example.com' });
      expectError(foreign, 403, 'origin_not_allowed');
    });

    it('draw_user_growth: granularity=day over its default 30 days, the totals it prints', async () => {
      const data = await ok('/v1/reporting/metrics', { project: fx.projectId, host: HOST, granularity: 'day', days: 30 });
      expect(data.totals).toEqual({ uniqueVisitors: 2, views: 3 });
      expect(data.series).toHaveLength(30);
    });

    it('get_host_top_pages: rows of { key, views } for pages and referrers', async () => {
      const pages = await ok('/v1/reporting/breakdown', { project: fx.projectId, host: HOST, dimension: undefined, limit: 10 });
      expect(pages.rows).toEqual([
        { key: '/pricing', views: 2 },
        { key: '/', views: 1 },
      ]);
      const referrers = await ok('/v1/reporting/breakdown', { project: fx.projectId, host: HOST, dimension: 'top_referrers' });
      expect(referrers.rows).toEqual(
        expect.arrayContaining([
          { key: 'www.google.com', views: 2 },
          { key: 'chatgpt.com', views: 1 },
        ]),
      );
    });

    it('no project with a workspace key: 400 missing_required_param naming project (the connector asks which app)', async () => {
      const res = await tool('/v1/revenue');
      expectError(res, 400, 'missing_required_param');
      expect(res.body.error.message).toContain('project');
    });

    it('identity tools without identity access: 403 insufficient_scope (the connector offers the aggregate path)', async () => {
      for (const [path, params] of [
        ['/v1/errors/affected', { project: fx.projectId, fingerprint: FINGERPRINT }],
        ['/v1/customers/ranked', { project: fx.projectId }],
        ['/v1/crossmatch', { project: fx.projectId, userId: PAYING }],
      ] as const) {
        expectError(await tool(path, params, aggregateWk), 403, 'insufficient_scope');
      }
    });

    it('a single-project secret key: the same tools answer for its own project', async () => {
      const data = await ok('/v1/revenue', { project: fx.projectId }, fx.keys.skLive);
      expect(data.mrrCents).toBe(2900);
      expect((await ok('/v1/customers', {}, fx.keys.skLive)).payingCustomers).toBe(1);
    });
  });

  describe('Node client', () => {
    it('getOwnerStatus(): GET /v1/trust/status, blocked, blockReason, blockedKey at the top level', async () => {
      const res = await t.http.get('/v1/trust/status').query({ email: 'bad@spam.example' }).set(nodeClient(fx.keys.skLive));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({ object: 'trust_status', blocked: true, blockReason: 'blocklist:email', blockedKey: 'email:bad@spam.example' }),
      );
      const clear = await t.http.get('/v1/trust/status').query({ userId: PAYING }).set(nodeClient(fx.keys.skLive));
      expect(clear.body).toEqual(expect.objectContaining({ blocked: false, blockReason: null, blockedKey: null }));
    });

    it('gate(): POST /v1/trust/gate, action, allow, reasons, reference, support email, block event', async () => {
      const res = await t.http
        .post('/v1/trust/gate')
        .set({ ...nodeClient(fx.keys.skLive), 'Content-Type': 'application/json' })
        .send({ email: 'bad@spam.example', ip: '198.51.100.20' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          object: 'trust_gate',
          action: 'block',
          allow: false,
          band: str,
          blockReason: 'blocklist:email',
          blockedKey: 'email:bad@spam.example',
          reference: expect.stringMatching(/^[a-z0-9]{4}-[a-z0-9]{4}$/i),
          supportEmail: 'support@example.com',
          blockEventId: expect.stringMatching(/^blk_/),
        }),
      );
      const allowed = await t.http.post('/v1/trust/gate').set(nodeClient(fx.keys.skLive)).send({ email: 'fine@example.com' });
      expect(allowed.body).toEqual(expect.objectContaining({ action: 'allow', allow: true, blockReason: null, blockedKey: null }));
    });

    it('resolve() for a blocked user on a device not linked to them yet: blocked, reasons, reference, never authenticated', async () => {
      const res = await t.http
        .post('/v1/resolve')
        .set(nodeClient(fx.keys.skLive))
        .send({ userId: BLOCKED, anonymousId: `anon_${randomUUID()}`, ip: '203.0.113.4' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          blocked: true,
          blockReason: 'blocklist:user',
          blockedKey: `user:${BLOCKED}`,
          reference: str,
          supportEmail: 'support@example.com',
          blockEventId: expect.stringMatching(/^blk_/),
        }),
      );
      expect(res.body.status).not.toBe('authenticated');
      // The same user id from a publishable key is not the developer's word: the device alone decides.
      const browser = await t.http
        .post('/v1/resolve')
        .set(keyHeaders(fx, fx.keys.pubLive))
        .send({ userId: BLOCKED, anonymousId: `anon_${randomUUID()}` });
      expect(browser.status).toBe(200);
      expect(browser.body.blocked).toBe(false);
    });

    it('getEntitlements() then isEntitled() after a grant: crossdeckCustomerId and data[].key / isActive / validUntil', async () => {
      const grant = await t.http
        .post(`/v1/server/customers/${freeCustomerId}/grant`)
        .set(nodeClient(fx.keys.skLive))
        .send({ entitlementKey: 'pro', duration: 'P30D', reason: 'Support goodwill grant' });
      expect(grant.status).toBe(200);
      const res = await t.http.get('/v1/entitlements').query({ userId: FREE }).set(nodeClient(fx.keys.skLive));
      expect(res.status).toBe(200);
      expect(res.body.crossdeckCustomerId).toBe(freeCustomerId);
      const pro = res.body.data.find((e: { key: string }) => e.key === 'pro');
      expect(pro).toEqual(expect.objectContaining({ key: 'pro', isActive: true, validUntil: num }));
      // isEntitled() compares validUntil with the clock in seconds.
      expect(pro.validUntil).toBeGreaterThan(Math.floor(t.clock.nowMs() / 1000));
      expect(pro.validUntil).toBeLessThan(Math.floor(t.clock.nowMs() / 1000) + 31 * 86400);

      const resolved = await t.http.post('/v1/resolve').set(nodeClient(fx.keys.skLive)).send({ userId: FREE });
      expect(resolved.status).toBe(200);
      expect(resolved.body).toEqual(expect.objectContaining({ blocked: false, crossdeckCustomerId: freeCustomerId, status: str }));
      // The client reads entitlements as an array of strings, or treats anything else as none (below tier 3 it is null).
      const keys = resolved.body.entitlements;
      expect(keys === null || (Array.isArray(keys) && keys.every((e: unknown) => typeof e === 'string'))).toBe(true);
    });
  });
});
