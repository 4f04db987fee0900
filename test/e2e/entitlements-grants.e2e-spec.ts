import { type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { entitlementsHarness, GRANT_ID, REVOKE_ID, REASON, DAY } from '../support/harness/entitlements.js';

/**
 * Concurrent grants and revokes of one key (serialised by the row lock, versions counting the
 * changes) are tested on the service in test/medium/entitlement-lock-with-state.medium-spec.ts.
 */
describe('entitlements: manual grant and revoke (POST /v1/server/customers/{customerId}/grant, /revoke)', () => {
  const h = entitlementsHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, newCustomer, grant, revoke, serverRead, publicRead, audit, writeRail } = h;
  /** The customer's audit entries, as the operator's customer page lists them. */
  const timeline = async (customerId: string): Promise<{ eventId: string; eventType: string }[]> => {
    const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}/timeline?env=sandbox&limit=100`).set(operatorAuth());
    expect(res.status).toBe(200);
    return res.body.data;
  };

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
        crossdeckCustomerId: customerId,
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
      // one row, one audit entry per successful call (the customer has no other)
      const entries = await timeline(customerId);
      expect(entries.map((e) => e.eventId).sort()).toEqual([g30, g90, again30, life, after].map((r) => r.body.auditEventId).sort());
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
        crossdeckCustomerId: customerId,
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
      expect(await timeline(customerId)).toHaveLength(2);
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
        expect.objectContaining({
          key: 'pro_access',
          isActive: true,
          source: { rail: 'ios_store', productId: 'com.example.pro.monthly', subscriptionId: '2000000123456789' },
        }),
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
      expect(after.body.data).toEqual([
        expect.objectContaining({ key: 'both_key', validUntil: railEnd, source: expect.objectContaining({ rail: 'card_payments' }) }),
      ]);
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
});
