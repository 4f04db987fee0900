import { EntitlementWriter } from '../../libs/entitlements/src/index.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const REQUEST_ID = /^req_[0-9a-f]{24}$/;
const GRANT_ID = /^srv_grant_[a-z0-9]{24}$/;
const REVOKE_ID = /^srv_revoke_[a-z0-9]{24}$/;
const REASON = 'Goodwill credit after the March outage';
const DAY = 86_400;

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(typeof res.body.error.message).toBe('string');
}

describe('entitlements: reads, manual grant and revoke, key registry, product catalogue', () => {
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

  async function writeRail(customerId: string, key: string, rail: 'ios_store' | 'card_payments' | 'android_store', validUntil: number | null, f = fx, env: 'sandbox' | 'production' = 'sandbox') {
    const writer = t.app.get(EntitlementWriter);
    return t.dataSource.transaction((manager) =>
      writer.write(manager, { projectId: f.projectId, env }, {
        customerId,
        entitlementKey: key,
        rail,
        productId: 'com.example.pro.monthly',
        subscriptionId: '2000000123456789',
        state: 'active',
        validUntil,
      }),
    );
  }

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  describe('POST /v1/server/customers/{customerId}/grant', () => {
    it('grants: 200 entitlement_mutation with the public shape, private no-store, and an audit entry written with it', async () => {
      const { customerId } = await newCustomer();
      const before = now();
      const res = await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'entitlement_mutation',
        action: 'grant',
        serviceCustomerId: customerId,
        entitlement: {
          object: 'entitlement',
          key: 'pro_access',
          isActive: true,
          validUntil: expect.any(Number),
          source: { rail: 'manual', productId: 'manual', subscriptionId: res.body.auditEventId },
          updatedAt: expect.any(Number),
        },
        env: 'sandbox',
        auditEventId: expect.stringMatching(GRANT_ID),
      });
      const { validUntil, updatedAt } = res.body.entitlement;
      expect(validUntil).toBeGreaterThanOrEqual(before + 30 * DAY);
      expect(validUntil).toBeLessThanOrEqual(now() + 30 * DAY);
      expect(Math.abs(updatedAt - now())).toBeLessThanOrEqual(2);

      const entry = await audit(res.body.auditEventId);
      expect(entry.status).toBe(200);
      expect(entry.body.data).toEqual(
        expect.objectContaining({
          eventId: res.body.auditEventId,
          rail: 'manual',
          env: 'sandbox',
          eventType: 'entitlement.granted_manually',
          projectId: fx.projectId,
          customerId,
          decision: 'applied',
          reason: REASON,
          actor: `api_key:${fx.keyIds.skTest}`,
          requestId: res.headers['x-request-id'],
        }),
      );
    });

    it('durations: P90D is 90 days, P1Y one calendar year, lifetime has validUntil null', async () => {
      const { customerId } = await newCustomer();
      const p90 = await grant(customerId, { entitlementKey: 'ninety', duration: 'P90D', reason: REASON });
      expect(p90.status).toBe(200);
      expect(p90.body.entitlement.validUntil - p90.body.entitlement.updatedAt).toBeGreaterThanOrEqual(90 * DAY - 1);
      expect(p90.body.entitlement.validUntil - p90.body.entitlement.updatedAt).toBeLessThanOrEqual(90 * DAY + 1);

      const p1y = await grant(customerId, { entitlementKey: 'yearly', duration: 'P1Y', reason: REASON });
      expect(p1y.status).toBe(200);
      const start = new Date(p1y.body.entitlement.updatedAt * 1000);
      const end = new Date(p1y.body.entitlement.validUntil * 1000);
      expect(end.getUTCFullYear()).toBe(start.getUTCFullYear() + 1);
      expect(end.getUTCMonth()).toBe(start.getUTCMonth());

      const life = await grant(customerId, { entitlementKey: 'forever', duration: 'lifetime', reason: REASON });
      expect(life.status).toBe(200);
      expect(life.body.entitlement).toEqual(expect.objectContaining({ key: 'forever', isActive: true, validUntil: null }));

      const read = await serverRead(customerId);
      expect(read.body.data.map((e: any) => e.key)).toEqual(['forever', 'ninety', 'yearly']);
    });

    it('a grant on an active manual entitlement never shortens it: the later end wins, lifetime beats any date', async () => {
      const { customerId } = await newCustomer();
      const g30 = await grant(customerId, { entitlementKey: 'stacked', duration: 'P30D', reason: REASON });
      const g90 = await grant(customerId, { entitlementKey: 'stacked', duration: 'P90D', reason: REASON });
      expect(g90.body.entitlement.validUntil).toBeGreaterThanOrEqual(g30.body.entitlement.validUntil + 60 * DAY - 2);
      expect(g90.body.entitlement.source.subscriptionId).toBe(g90.body.auditEventId);
      const again30 = await grant(customerId, { entitlementKey: 'stacked', duration: 'P30D', reason: REASON });
      expect(again30.status).toBe(200);
      expect(again30.body.entitlement.validUntil).toBe(g90.body.entitlement.validUntil);
      expect(again30.body.auditEventId).not.toBe(g90.body.auditEventId);
      const life = await grant(customerId, { entitlementKey: 'stacked', duration: 'lifetime', reason: REASON });
      expect(life.body.entitlement.validUntil).toBeNull();
      const after = await grant(customerId, { entitlementKey: 'stacked', duration: 'P1Y', reason: REASON });
      expect(after.body.entitlement.validUntil).toBeNull();
      // one row, one audit entry per successful call
      const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE customer_id = $1 AND details->>'entitlementKey' = 'stacked'`, [customerId]);
      expect(rows[0].n).toBe(5);
    });

    it('validates the body: snake_case key of 2..40, known duration, reason of 20..500', async () => {
      const { customerId } = await newCustomer();
      const ok = { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON };
      const cases: [Record<string, unknown>, string, string][] = [
        [{ ...ok, entitlementKey: undefined }, 'missing_required_param', 'entitlementKey'],
        [{ ...ok, entitlementKey: 'p' }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, entitlementKey: 'a'.repeat(41) }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, entitlementKey: 'ProAccess' }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, entitlementKey: 'pro-access' }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, entitlementKey: '1pro' }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, entitlementKey: 42 }, 'invalid_param_value', 'entitlementKey'],
        [{ ...ok, duration: undefined }, 'missing_required_param', 'duration'],
        [{ ...ok, duration: 'P7D' }, 'invalid_param_value', 'duration'],
        [{ ...ok, duration: 'p30d' }, 'invalid_param_value', 'duration'],
        [{ ...ok, reason: undefined }, 'missing_required_param', 'reason'],
        [{ ...ok, reason: 'x'.repeat(19) }, 'invalid_param_value', 'reason'],
        [{ ...ok, reason: 'x'.repeat(501) }, 'invalid_param_value', 'reason'],
      ];
      for (const [body, code, field] of cases) {
        const res = await grant(customerId, body);
        expectError(res, 400, code);
        expect(res.body.error.message).toContain(field);
      }
      expect((await grant(customerId, { ...ok, entitlementKey: 'ab', reason: 'x'.repeat(20) })).status).toBe(200);
      expect((await grant(customerId, { ...ok, entitlementKey: 'a'.repeat(40), reason: 'x'.repeat(500) })).status).toBe(200);
      expect((await serverRead(customerId)).body.data).toHaveLength(2);
    });

    it('unknown customer or a customerId without cdcust_: 400 invalid_customer, nothing written', async () => {
      const body = { entitlementKey: 'ghost_key', duration: 'P30D', reason: REASON };
      expectError(await grant('cdcust_doesnotexist', body), 400, 'invalid_customer');
      expectError(await grant('cust_123', body), 400, 'invalid_customer');
      const keys = await t.http.get(`/admin/v1/projects/${fx.projectId}/entitlement-keys`).set(operatorAuth());
      expect(keys.body.data.map((k: any) => k.key)).not.toContain('ghost_key');
    });
  });

  describe('POST /v1/server/customers/{customerId}/revoke', () => {
    it('revokes an active manual grant: 200 with isActive false and a srv_revoke_ audit entry', async () => {
      const { customerId, userId } = await newCustomer();
      const g = await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      const res = await revoke(customerId, { entitlementKey: 'pro_access', reason: 'Chargeback' });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'entitlement_mutation',
        action: 'revoke',
        serviceCustomerId: customerId,
        entitlement: {
          object: 'entitlement',
          key: 'pro_access',
          isActive: false,
          validUntil: g.body.entitlement.validUntil,
          source: { rail: 'manual', productId: 'manual', subscriptionId: g.body.auditEventId },
          updatedAt: expect.any(Number),
        },
        env: 'sandbox',
        auditEventId: expect.stringMatching(REVOKE_ID),
      });
      const entry = await audit(res.body.auditEventId);
      expect(entry.body).toEqual({
        object: 'audit_entry',
        data: expect.objectContaining({
          eventId: res.body.auditEventId,
          rail: 'manual',
          env: 'sandbox',
          eventType: 'entitlement.revoked_manually',
          projectId: fx.projectId,
          customerId,
          decision: 'applied',
          reason: 'Chargeback',
          actor: `api_key:${fx.keyIds.skTest}`,
          requestId: res.headers['x-request-id'],
        }),
      });
      expect((await publicRead({ userId })).body.data).toEqual([]);
      expect((await serverRead(customerId)).body.data).toEqual([]);

      // grant after revoke starts afresh
      const again = await grant(customerId, { entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
      expect(again.body.entitlement).toEqual(expect.objectContaining({ isActive: true, validUntil: null }));
      expect((await serverRead(customerId)).body.data).toHaveLength(1);
    });

    it('already revoked: 400 invalid_param_value saying so, no audit entry', async () => {
      const { customerId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      expect((await revoke(customerId, { entitlementKey: 'pro_access', reason: 'Refunded' })).status).toBe(200);
      const res = await revoke(customerId, { entitlementKey: 'pro_access', reason: 'Refunded' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/already revoked/);
      const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE customer_id = $1`, [customerId]);
      expect(rows[0].n).toBe(2);
    });

    it('never granted: 400 invalid_param_value saying so', async () => {
      const { customerId } = await newCustomer();
      const res = await revoke(customerId, { entitlementKey: 'pro_access', reason: 'Refunded' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/never granted/);
    });

    it('rail-derived entitlement: 400 invalid_param_value telling to cancel or refund on the rail, state unchanged', async () => {
      const { customerId } = await newCustomer();
      await writeRail(customerId, 'pro_access', 'ios_store', now() + 30 * DAY);
      const res = await revoke(customerId, { entitlementKey: 'pro_access', reason: 'Refund please' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/ios_store/);
      expect(res.body.error.message).toMatch(/cancel or refund on the rail/);
      const read = await serverRead(customerId);
      expect(read.body.data).toEqual([
        expect.objectContaining({ key: 'pro_access', isActive: true, source: { rail: 'ios_store', productId: 'com.example.pro.monthly', subscriptionId: '2000000123456789' } }),
      ]);
    });

    it('a key held both manually and by a rail: revoke ends the manual grant, the rail keeps the key active', async () => {
      const { customerId } = await newCustomer();
      const railEnd = now() + 10 * DAY;
      await writeRail(customerId, 'both_key', 'card_payments', railEnd);
      await grant(customerId, { entitlementKey: 'both_key', duration: 'lifetime', reason: REASON });
      // the read collapses to one entry per key: the strongest (lifetime manual)
      const before = await serverRead(customerId);
      expect(before.body.data).toEqual([expect.objectContaining({ key: 'both_key', validUntil: null, source: expect.objectContaining({ rail: 'manual' }) })]);
      const res = await revoke(customerId, { entitlementKey: 'both_key', reason: 'Comp ended' });
      expect(res.status).toBe(200);
      expect(res.body.entitlement.source.rail).toBe('manual');
      const after = await serverRead(customerId);
      expect(after.body.data).toEqual([expect.objectContaining({ key: 'both_key', validUntil: railEnd, source: expect.objectContaining({ rail: 'card_payments' }) })]);
      // now only the rail holds it
      const again = await revoke(customerId, { entitlementKey: 'both_key', reason: 'Comp ended' });
      expect(again.body.error.message).toMatch(/cancel or refund on the rail/);
    });

    it('validates the body: snake_case key, reason required and at most 500 chars', async () => {
      const { customerId } = await newCustomer();
      expectError(await revoke(customerId, { reason: 'x' }), 400, 'missing_required_param');
      expectError(await revoke(customerId, { entitlementKey: 'Pro', reason: 'x' }), 400, 'invalid_param_value');
      expectError(await revoke(customerId, { entitlementKey: 'pro_access' }), 400, 'missing_required_param');
      expectError(await revoke(customerId, { entitlementKey: 'pro_access', reason: '' }), 400, 'invalid_param_value');
      const long = await revoke(customerId, { entitlementKey: 'pro_access', reason: 'x'.repeat(501) });
      expectError(long, 400, 'invalid_param_value');
      expect(long.body.error.message).toContain('reason');
    });

    it('unknown customer or a customerId without cdcust_: 400 invalid_customer', async () => {
      expectError(await revoke('cdcust_doesnotexist', { entitlementKey: 'pro_access', reason: 'x' }), 400, 'invalid_customer');
      expectError(await revoke('nope', { entitlementKey: 'pro_access', reason: 'x' }), 400, 'invalid_customer');
    });
  });

  describe('concurrency', () => {
    it('10 grants and 10 revokes fired together: consistent state, exactly one audit entry per successful call', async () => {
      const { customerId } = await newCustomer();
      const first = await grant(customerId, { entitlementKey: 'raced', duration: 'P30D', reason: REASON });
      expect(first.status).toBe(200);
      const calls = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? grant(customerId, { entitlementKey: 'raced', duration: i % 4 === 0 ? 'P90D' : 'P30D', reason: REASON })
          : revoke(customerId, { entitlementKey: 'raced', reason: `race ${i}` }),
      );
      const results = await Promise.all(calls);
      const grants = results.filter((_, i) => i % 2 === 0);
      const revokes = results.filter((_, i) => i % 2 === 1);
      expect(grants.map((r) => r.status)).toEqual(Array(10).fill(200));
      for (const r of revokes) {
        if (r.status !== 200) {
          expectError(r, 400, 'invalid_param_value');
          expect(r.body.error.message).toMatch(/already revoked/);
        }
      }
      const okRevokes = revokes.filter((r) => r.status === 200);
      expect(okRevokes.length).toBeGreaterThanOrEqual(1);

      const entries: { event_id: string; event_type: string; version: number }[] = await t.dataSource.query(
        `SELECT event_id, event_type, (details->>'version')::int AS version
           FROM audit_entries WHERE project_id = $1 AND env = 'sandbox' AND customer_id = $2 AND details->>'entitlementKey' = 'raced'
          ORDER BY (details->>'version')::int`,
        [fx.projectId, customerId],
      );
      const successfulIds = [first, ...grants, ...okRevokes].map((r) => r.body.auditEventId);
      expect(entries).toHaveLength(successfulIds.length);
      expect(entries.map((e) => e.event_id).sort()).toEqual([...successfulIds].sort());
      // versions 1..N: every change serialised, none lost
      expect(entries.map((e) => e.version)).toEqual(entries.map((_, i) => i + 1));
      // replay the journal: a revoke only ever followed an active state
      let active = false;
      for (const entry of entries) {
        if (entry.event_type === 'entitlement.revoked_manually') {
          expect(active).toBe(true);
          active = false;
        } else {
          expect(entry.event_type).toBe('entitlement.granted_manually');
          active = true;
        }
      }
      const [row] = await t.dataSource.query(
        `SELECT state, version, last_event_id FROM entitlements WHERE project_id = $1 AND env = 'sandbox' AND customer_id = $2 AND entitlement_key = 'raced' AND rail = 'manual'`,
        [fx.projectId, customerId],
      );
      const last = entries[entries.length - 1];
      expect(row).toEqual({ state: active ? 'active' : 'revoked', version: entries.length, last_event_id: last.event_id });
      const read = await serverRead(customerId);
      expect(read.body.data.map((e: any) => e.key)).toEqual(active ? ['raced'] : []);
    });

    it('concurrent first grants of one key create one row', async () => {
      const { customerId } = await newCustomer();
      const results = await Promise.all(Array.from({ length: 8 }, () => grant(customerId, { entitlementKey: 'first_race', duration: 'P30D', reason: REASON })));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      const rows = await t.dataSource.query(`SELECT version FROM entitlements WHERE customer_id = $1 AND entitlement_key = 'first_race'`, [customerId]);
      expect(rows).toEqual([{ version: 8 }]);
      const audits = await t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE customer_id = $1`, [customerId]);
      expect(audits[0].n).toBe(8);
    });
  });

  describe('GET /v1/entitlements', () => {
    it('reads the calling customer by userId or anonymousId with a publishable key, private no-store', async () => {
      const { customerId, userId, anonymousId } = await newCustomer(fx.keys.pubTest);
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
      for (const query of [{ userId }, { anonymousId }]) {
        const res = await publicRead(query);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.body).toEqual({
          object: 'list',
          data: [
            {
              object: 'entitlement',
              key: 'pro_access',
              isActive: true,
              validUntil: null,
              source: { rail: 'manual', productId: 'manual', subscriptionId: expect.stringMatching(GRANT_ID) },
              updatedAt: expect.any(Number),
            },
          ],
          serviceCustomerId: customerId,
          env: 'sandbox',
        });
      }
    });

    it('reads any customer by customerId, userId or anonymousId with a secret key; also without the /v1 prefix', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      for (const query of [{ customerId }, { userId }]) {
        const res = await publicRead(query, sk());
        expect(res.status).toBe(200);
        expect(res.body.serviceCustomerId).toBe(customerId);
        expect(res.body.data.map((e: any) => e.key)).toEqual(['pro_access']);
      }
      const bare = await t.http.get('/entitlements').query({ customerId }).set(sk());
      expect(bare.status).toBe(200);
      expect(bare.body.data).toHaveLength(1);
    });

    it('returns active entitlements only', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'kept', duration: 'P30D', reason: REASON });
      await grant(customerId, { entitlementKey: 'dropped', duration: 'P30D', reason: REASON });
      await revoke(customerId, { entitlementKey: 'dropped', reason: 'Refunded' });
      await writeRail(customerId, 'lapsed_rail', 'android_store', now() - 60);
      const res = await publicRead({ userId });
      expect(res.body.data.map((e: any) => e.key)).toEqual(['kept']);
    });

    it('no hint: 400 missing_customer; several hints: 400 invalid_param_value', async () => {
      expectError(await publicRead({}), 400, 'missing_customer');
      expectError(await publicRead({ userId: '' }), 400, 'missing_customer');
      expectError(await publicRead({}, sk()), 400, 'missing_customer');
      const two = await publicRead({ userId: 'u1', anonymousId: 'a1' });
      expectError(two, 400, 'invalid_param_value');
      expect(two.body.error.message).toMatch(/userId, anonymousId/);
      expectError(await publicRead({ customerId: 'cdcust_x', userId: 'u1' }, sk()), 400, 'invalid_param_value');
      const repeated = await t.http.get('/v1/entitlements?userId=a&userId=b').set(pub());
      expectError(repeated, 400, 'invalid_param_value');
      expect(repeated.body.error.message).toBe('userId must be a string');
    });

    it('a NUL character (%00) in a hint, a path id or a reason is 400 invalid_param_value, never a 500', async () => {
      expectError(await t.http.get('/v1/entitlements?userId=u%00').set(pub()), 400, 'invalid_param_value');
      expectError(await t.http.get('/v1/entitlements?customerId=cdcust_%00').set(sk()), 400, 'invalid_param_value');
      expectError(await t.http.get('/v1/server/customers/cdcust_%00/entitlements').set(sk()), 400, 'invalid_param_value');
      const { customerId } = await newCustomer();
      expectError(await grant(customerId, { entitlementKey: 'nul_reason', duration: 'P30D', reason: `${REASON}\u0000` }), 400, 'invalid_param_value');
      expect((await serverRead(customerId)).body.data).toEqual([]);
      expectError(await revoke(customerId, { entitlementKey: 'nul_reason', reason: 'a\u0000' }), 400, 'invalid_param_value');
    });

    it('customerId without cdcust_: 400 invalid_customer; a publishable key may not name a customerId', async () => {
      expectError(await publicRead({ customerId: 'cust_123' }, sk()), 400, 'invalid_customer');
      const { customerId } = await newCustomer();
      const res = await publicRead({ customerId });
      expectError(res, 400, 'invalid_customer');
      expect(res.body.error.message).toMatch(/userId or anonymousId/);
    });

    it('unknown customer: 200 with data [] and serviceCustomerId ""', async () => {
      const empty = { object: 'list', data: [], serviceCustomerId: '', env: 'sandbox' };
      for (const [query, headers] of [
        [{ userId: 'nobody_here' }, pub()],
        [{ anonymousId: 'no_device' }, pub()],
        [{ customerId: 'cdcust_doesnotexist' }, sk()],
      ] as const) {
        const res = await publicRead(query, headers);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.body).toEqual(empty);
      }
      const live = await publicRead({ userId: 'nobody_here' }, pub(fx.keys.pubLive));
      expect(live.body).toEqual({ ...empty, env: 'production' });
    });

    it('a forgotten customer reads as unknown', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
      const forget = await t.http.post('/v1/identity/forget').set(sk()).send({ customerId });
      expect(forget.status).toBe(200);
      expect((await publicRead({ userId })).body).toEqual({ object: 'list', data: [], serviceCustomerId: '', env: 'sandbox' });
      expect((await publicRead({ customerId }, sk())).body.serviceCustomerId).toBe('');
      expectError(await serverRead(customerId), 400, 'invalid_customer');
      expectError(await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }), 400, 'invalid_customer');
    });

    it('needs a key: 401 missing_api_key', async () => {
      expectError(await t.http.get('/v1/entitlements').query({ userId: 'x' }), 401, 'missing_api_key');
    });

    it('the entitlements bucket: 429 rate_limited with Retry-After and X-Service-Sample-Rate past the override', async () => {
      const small = await createProjectWithApp(t);
      await setRateLimits(t, small.projectId, { entitlements: { sustained: 1, burst: 2 } });
      const headers = keyHeaders(small, small.keys.pubTest);
      const first = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      const second = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      expectError(third, 429, 'rate_limited');
      expect(third.body.error.type).toBe('rate_limit_error');
      expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(third.headers['x-service-sample-rate'])).toBeGreaterThanOrEqual(0);
      expect(Number(third.headers['x-service-sample-rate'])).toBeLessThanOrEqual(1);
      // the server read spends the same bucket; production has its own bucket
      expectError(await t.http.get('/v1/server/customers/cdcust_x/entitlements').set(keyHeaders(small, small.keys.skTest)), 429, 'rate_limited');
      expect((await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(keyHeaders(small, small.keys.pubLive))).status).toBe(200);
      // another project is not affected
      expect((await publicRead({ userId: 'someone' })).status).toBe(200);
    });
  });

  describe('GET /v1/server/customers/{customerId}/entitlements', () => {
    it('same envelope as the public read, private no-store', async () => {
      const { customerId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      const res = await serverRead(customerId);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({ object: 'list', data: [expect.objectContaining({ object: 'entitlement', key: 'pro_access', isActive: true })], serviceCustomerId: customerId, env: 'sandbox' });
      const noGrants = await newCustomer();
      expect((await serverRead(noGrants.customerId)).body).toEqual({ object: 'list', data: [], serviceCustomerId: noGrants.customerId, env: 'sandbox' });
    });

    it('unknown customer or bad prefix: 400 invalid_customer', async () => {
      expectError(await serverRead('cdcust_doesnotexist'), 400, 'invalid_customer');
      expectError(await serverRead('cust_abc'), 400, 'invalid_customer');
    });
  });

  describe('server endpoints refuse publishable keys', () => {
    it('401 invalid_api_key on read, grant and revoke', async () => {
      const { customerId } = await newCustomer();
      expectError(await serverRead(customerId, pub()), 401, 'invalid_api_key');
      expectError(await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, pub()), 401, 'invalid_api_key');
      expectError(await revoke(customerId, { entitlementKey: 'pro_access', reason: 'x' }, pub()), 401, 'invalid_api_key');
      expectError(await grant(customerId, {}, { Authorization: `Bearer ${fx.keys.pubLive}` }), 401, 'invalid_api_key');
      expectError(await t.http.post(`/v1/server/customers/${customerId}/grant`).send({}), 401, 'missing_api_key');
      expect((await serverRead(customerId)).body.data).toEqual([]);
    });
  });

  describe('environment isolation', () => {
    it('a sandbox grant is invisible to production keys, and production keys cannot touch the sandbox customer', async () => {
      const { customerId, userId, anonymousId } = await newCustomer();
      const g = await grant(customerId, { entitlementKey: 'sandbox_only', duration: 'lifetime', reason: REASON });
      expect(g.body.env).toBe('sandbox');
      // the same person in production is another customer, with no entitlements
      const live = await t.http.post('/v1/identify').set(sk(fx.keys.skLive)).send({ userId, anonymousId });
      expect(live.status).toBe(200);
      expect(live.body.serviceCustomerId).not.toBe(customerId);
      const liveRead = await publicRead({ userId }, pub(fx.keys.pubLive));
      expect(liveRead.body).toEqual({ object: 'list', data: [], serviceCustomerId: live.body.serviceCustomerId, env: 'production' });
      expect((await publicRead({ customerId }, sk(fx.keys.skLive))).body).toEqual({ object: 'list', data: [], serviceCustomerId: '', env: 'production' });
      expectError(await serverRead(customerId, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await grant(customerId, { entitlementKey: 'x_live', duration: 'P30D', reason: REASON }, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await revoke(customerId, { entitlementKey: 'sandbox_only', reason: 'x' }, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await audit(g.body.auditEventId, sk(fx.keys.skLive)), 400, 'invalid_param_value');
      // a production grant to the production customer stays in production
      const liveGrant = await grant(live.body.serviceCustomerId, { entitlementKey: 'live_only', duration: 'P30D', reason: REASON }, sk(fx.keys.skLive));
      expect(liveGrant.body.env).toBe('production');
      expect((await publicRead({ userId }, pub(fx.keys.pubLive))).body.data.map((e: any) => e.key)).toEqual(['live_only']);
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['sandbox_only']);
    });

    it('another project cannot read or grant to this project\'s customers', async () => {
      const other = await createProjectWithApp(t);
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      expectError(await serverRead(customerId, keyHeaders(other, other.keys.skTest)), 400, 'invalid_customer');
      expect((await publicRead({ userId }, keyHeaders(other, other.keys.pubTest))).body.serviceCustomerId).toBe('');
      expectError(await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, keyHeaders(other, other.keys.skTest)), 400, 'invalid_customer');
    });
  });

  describe('operator: dashboard grant', () => {
    const path = (projectId: string, customerId: string) => `/admin/v1/projects/${projectId}/customers/${customerId}/grant`;

    it('grants in the environment named in the body, attributed to the operator, same response shape', async () => {
      const { customerId, userId } = await newCustomer();
      const res = await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send({ env: 'sandbox', entitlementKey: 'dash_key', duration: 'P90D', reason: REASON });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'entitlement_mutation',
        action: 'grant',
        serviceCustomerId: customerId,
        entitlement: expect.objectContaining({ object: 'entitlement', key: 'dash_key', isActive: true, source: { rail: 'manual', productId: 'manual', subscriptionId: res.body.auditEventId } }),
        env: 'sandbox',
        auditEventId: expect.stringMatching(GRANT_ID),
      });
      const entry = await audit(res.body.auditEventId);
      expect(entry.body.data).toEqual(expect.objectContaining({ actor: 'operator', eventType: 'entitlement.granted_manually', decision: 'applied', requestId: res.headers['x-request-id'] }));
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['dash_key']);
      // the dashboard grant can be revoked with the secret key
      expect((await revoke(customerId, { entitlementKey: 'dash_key', reason: 'Ended' })).status).toBe(200);
    });

    it('the customer must exist in that environment and project: 404 resource_missing', async () => {
      const { customerId } = await newCustomer();
      const body = { env: 'production', entitlementKey: 'dash_key', duration: 'P30D', reason: REASON };
      expectError(await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send(body), 404, 'resource_missing');
      expectError(await t.http.post(path(fx.projectId, 'cdcust_doesnotexist')).set(operatorAuth()).send({ ...body, env: 'sandbox' }), 404, 'resource_missing');
      expectError(await t.http.post(path('proj_doesnotexist', customerId)).set(operatorAuth()).send({ ...body, env: 'sandbox' }), 404, 'resource_missing');
    });

    it('validates env and the grant fields; needs the operator token', async () => {
      const { customerId } = await newCustomer();
      const ok = { env: 'sandbox', entitlementKey: 'dash_key', duration: 'P30D', reason: REASON };
      expectError(await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send({ ...ok, env: undefined }), 400, 'missing_required_param');
      expectError(await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send({ ...ok, env: 'staging' }), 400, 'invalid_param_value');
      expectError(await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send({ ...ok, reason: 'short' }), 400, 'invalid_param_value');
      expectError(await t.http.post(path(fx.projectId, customerId)).send(ok), 401, 'invalid_operator_token');
      expectError(await t.http.post(path(fx.projectId, customerId)).set(sk()).send(ok), 401, 'invalid_operator_token');
    });
  });

  describe('operator: entitlement-key registry and product catalogue', () => {
    it('keys become registered when granted (first registration kept), per project across environments', async () => {
      const project = await createProjectWithApp(t);
      const sandboxCustomer = await newCustomer(project.keys.skTest, project);
      const liveCustomer = await newCustomer(project.keys.skLive, project);
      await grant(sandboxCustomer.customerId, { entitlementKey: 'alpha', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skTest));
      await grant(liveCustomer.customerId, { entitlementKey: 'beta', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skLive));
      await grant(liveCustomer.customerId, { entitlementKey: 'alpha', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skLive));
      const res = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          { key: 'alpha', registeredBy: 'grant', createdAt: expect.any(Number) },
          { key: 'beta', registeredBy: 'grant', createdAt: expect.any(Number) },
        ],
      });
      expect(Math.abs(res.body.data[0].createdAt - now())).toBeLessThanOrEqual(5);
      // not another project's
      const mine = await t.http.get(`/admin/v1/projects/${fx.projectId}/entitlement-keys`).set(operatorAuth());
      expect(mine.body.data.map((k: any) => k.key)).not.toContain('beta');
    });

    it('PUT products replaces the catalogue, returns it whole and registers its keys as catalog', async () => {
      const project = await createProjectWithApp(t);
      const customer = await newCustomer(project.keys.skTest, project);
      await grant(customer.customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skTest));
      const products = [
        { rail: 'ios_store', productId: 'com.example.pro.monthly', entitlementKeys: ['pro_access', 'pro_extras'] },
        { rail: 'card_payments', productId: 'price_123', entitlementKeys: ['pro_access'] },
        { rail: 'android_store', productId: 'pro_yearly', entitlementKeys: ['Premium-Tier', 'pro_access', 'pro_access'] },
      ];
      const res = await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'product_catalog',
        projectId: project.projectId,
        products: [products[0], products[1], { ...products[2], entitlementKeys: ['Premium-Tier', 'pro_access'] }],
      });
      const keys = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      const byKey = Object.fromEntries(keys.body.data.map((k: any) => [k.key, k.registeredBy]));
      expect(byKey).toEqual({ pro_access: 'grant', pro_extras: 'catalog', 'Premium-Tier': 'catalog' });

      // replace: the old products are gone, registered keys stay
      const second = await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products: [{ rail: 'card_payments', productId: 'price_999', entitlementKeys: ['team'] }] });
      expect(second.status).toBe(200);
      const read = await t.http.get(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth());
      expect(read.body.products).toEqual([{ rail: 'card_payments', productId: 'price_999', entitlementKeys: ['team'] }]);
      const keysAfter = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      expect(keysAfter.body.data.map((k: any) => k.key).sort()).toEqual(['Premium-Tier', 'pro_access', 'pro_extras', 'team']);

      const cleared = await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products: [] });
      expect(cleared.body.products).toEqual([]);
    });

    it('validates the catalogue', async () => {
      const url = `/admin/v1/projects/${fx.projectId}/products`;
      const put = (body: unknown) => t.http.put(url).set(operatorAuth()).send(body as object);
      expectError(await put({}), 400, 'missing_required_param');
      expectError(await put({ products: 'x' }), 400, 'invalid_param_value');
      expectError(await put({ products: [{ rail: 'manual', productId: 'p', entitlementKeys: ['a'] }] }), 400, 'invalid_param_value');
      expectError(await put({ products: [{ rail: 'ios_store', entitlementKeys: ['a'] }] }), 400, 'missing_required_param');
      expectError(await put({ products: [{ rail: 'ios_store', productId: 'p', entitlementKeys: ['has space'] }] }), 400, 'invalid_param_value');
      const dup = await put({ products: [{ rail: 'ios_store', productId: 'p', entitlementKeys: ['a'] }, { rail: 'ios_store', productId: 'p', entitlementKeys: ['b'] }] });
      expectError(dup, 400, 'invalid_param_value');
      expect(dup.body.error.message).toContain('products[1]');
      expectError(await t.http.put(url).send({ products: [] }), 401, 'invalid_operator_token');
    });

    it('unknown project: 404 resource_missing', async () => {
      expectError(await t.http.get('/admin/v1/projects/proj_doesnotexist/entitlement-keys').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.put('/admin/v1/projects/proj_doesnotexist/products').set(operatorAuth()).send({ products: [] }), 404, 'resource_missing');
      expectError(await t.http.get('/admin/v1/projects/proj_doesnotexist/products').set(operatorAuth()), 404, 'resource_missing');
    });
  });

  describe('expiry (test clock)', () => {
    it('a P30D grant stops being active once the clock passes validUntil; lifetime grants stay', async () => {
      const { customerId, userId } = await newCustomer();
      const dated = await grant(customerId, { entitlementKey: 'month_pass', duration: 'P30D', reason: REASON });
      await grant(customerId, { entitlementKey: 'forever_pass', duration: 'lifetime', reason: REASON });
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['forever_pass', 'month_pass']);

      const toEnd = dated.body.entitlement.validUntil - now();
      const almost = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: toEnd - 5 });
      expect(almost.status).toBe(200);
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['forever_pass', 'month_pass']);

      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 10 });
      const after = await publicRead({ userId });
      expect(after.body.data.map((e: any) => e.key)).toEqual(['forever_pass']);
      expect((await serverRead(customerId)).body.data.map((e: any) => e.key)).toEqual(['forever_pass']);

      // revoking an expired grant: 400 saying it expired
      const res = await revoke(customerId, { entitlementKey: 'month_pass', reason: 'Cleanup' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/expired/);

      // a new grant starts from now, not from the old end
      const renewed = await grant(customerId, { entitlementKey: 'month_pass', duration: 'P30D', reason: REASON });
      expect(renewed.body.entitlement.validUntil).toBeGreaterThanOrEqual(now() + 30 * DAY - 2);

      // ten years on, lifetime is still active
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3650 * DAY });
      expect((await publicRead({ userId })).body.data).toEqual([expect.objectContaining({ key: 'forever_pass', isActive: true, validUntil: null })]);
    });
  });
});
