import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '#identity';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { customerMonthlyRevenue } from '../support/factories/telemetry.js';
import { expectError } from '../support/expect-error.js';
import { bearer, expectNamedError, identifyUsers, secretKeyWithScopes } from '../support/read-api.js';

/**
 * GET /v1/errors and /v1/errors/affected: the per-day error rollups the event write keeps,
 * joined to identity and the revenue ledger. The card rail is connected through the operator API;
 * the ledger's rows for a paying customer come from a factory (the rail notifications that
 * produce them are the revenue ledger's own tests).
 */
describe('error impact and affected users', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let identityKey: string;
  const fingerprint = 'beefcafe';
  const customers: Record<string, string> = {};

  const sendErrors = async (events: Array<{ userId?: string; anonymousId?: string; at: number; errorType?: string; eventId?: string }>) => {
    const body = {
      events: events.map((e) => ({
        name: 'error.unhandled',
        eventId: e.eventId ?? `err_${randomUUID()}`,
        timestamp: e.at,
        level: 'error',
        ...(e.userId ? { developerUserId: e.userId } : {}),
        anonymousId: e.anonymousId ?? `anon_${randomUUID().slice(0, 8)}`,
        properties: { fingerprint, message: 'boom', errorType: e.errorType ?? 'TypeError' },
      })),
    };
    const res = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send(body);
    expect(res.status).toBe(202);
    return body;
  };

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    Object.assign(customers, await identifyUsers(t, p, ['u_paying', 'u_free', 'u_whale']));
    identityKey = await secretKeyWithScopes(t, p.keyIds.skTest, ['reporting:identity', 'errors:read']);
  });
  afterAll(async () => t.close());

  it('an unknown fingerprint is data: null in the envelope', async () => {
    for (const fp of ['00000000', 'a1b2c3']) {
      const res = await t.http.get(`/v1/errors?fingerprint=${fp}`).set(bearer(p.keys.skTest));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({ object: 'error_impact', data: null, meta: expect.objectContaining({ project: p.projectId, env: 'sandbox' }) });
    }
  });

  it('occurrences, affected users, first and last seen come from the rollups; a retried event counts once', async () => {
    const now = t.clock.nowMs();
    const sent = await sendErrors([
      { userId: 'u_paying', at: now - 5000, errorType: 'RangeError' },
      { userId: 'u_paying', at: now - 4000 },
      { userId: 'u_free', at: now - 3000 },
      { at: now - 2000 },
      { userId: 'u_whale', at: now - 1000, errorType: 'TypeError' },
    ]);
    // The same batch again (a client retry): no occurrence counts twice.
    expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send(sent)).status).toBe(202);

    const res = await t.http.get(`/v1/errors?fingerprint=${fingerprint.toUpperCase()}`).set(bearer(p.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      fingerprint,
      exceptionType: 'TypeError',
      status: 'open',
      level: 'error',
      occurrences: 5,
      affected: { users: 3, payingUsers: null },
      firstSeen: now - 5000,
      lastSeen: now - 1000,
      // payingUsers is null because revenue is not instrumented: data says so beside it.
      coverage: { state: 'not_instrumented', since: null },
    });
    expect(res.body.meta.coverage.errors.state).toBe('measured');
    expect(res.body.meta.coverage.revenue).toEqual({ state: 'not_instrumented', since: null });
    const [{ n }] = await t.dataSource.query(`SELECT sum(occurrences)::int AS n FROM error_daily_rollups WHERE project_id = $1`, [p.projectId]);
    expect(n).toBe(5);
  });

  it('with revenue measured, paying users are counted and the affected rows put revenue at risk first', async () => {
    expect((await t.http.put(`/admin/v1/projects/${p.projectId}/rails/card_payments`).set(operatorAuth()).send({})).status).toBe(200);
    await customerMonthlyRevenue(t.dataSource, testScope(p.projectId), customers.u_paying!, 900);
    await customerMonthlyRevenue(t.dataSource, testScope(p.projectId), customers.u_whale!, 49_900);

    const impact = await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest));
    expect(impact.body.data.affected).toEqual({ users: 3, payingUsers: 2 });

    const res = await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}&limit=2`).set(bearer(identityKey));
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('error_affected_users');
    expect(res.body.data.rows).toEqual([
      {
        userId: 'u_whale',
        serviceCustomerId: customers.u_whale,
        crossdeckCustomerId: customers.u_whale,
        monthlyRevenueCents: 49_900,
        lastHitAt: expect.any(Number),
      },
      {
        userId: 'u_paying',
        serviceCustomerId: customers.u_paying,
        crossdeckCustomerId: customers.u_paying,
        monthlyRevenueCents: 900,
        lastHitAt: expect.any(Number),
      },
    ]);
    const all = await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}`).set(bearer(identityKey));
    expect(all.body.data.rows.map((r: { userId: string }) => r.userId)).toEqual(['u_whale', 'u_paying', 'u_free']);
    expect(JSON.stringify(all.body)).not.toContain('@');
  });

  it('scopes, key kinds and parameters', async () => {
    expectNamedError(
      await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest)),
      403,
      'insufficient_scope',
      /reporting:identity/,
    );
    const revenueOnly = await secretKeyWithScopes(t, p.keyIds.skLive, ['revenue:read']);
    expectNamedError(await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(revenueOnly)), 403, 'insufficient_scope', /errors:read/);
    expectError(await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(keyHeaders(p, p.keys.pubTest)), 401, 'invalid_api_key');
    expectNamedError(await t.http.get('/v1/errors').set(bearer(p.keys.skTest)), 400, 'missing_required_param', /fingerprint/);
    expectNamedError(
      await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}&limit=101`).set(bearer(identityKey)),
      400,
      'invalid_param_value',
      /limit/,
    );
    expectError(await t.http.get(`/v1/errors?fingerprint=${fingerprint}&project=proj_other`).set(bearer(p.keys.skTest)), 403, 'project_not_allowed');
  });

  it('erasure of a customer removes its user id from the affected users; the counts stay', async () => {
    const forgot = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId: customers.u_free });
    expect(forgot.status).toBe(200);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    const rows = await t.dataSource.query(`SELECT user_id FROM error_affected_users WHERE project_id = $1 ORDER BY user_id`, [p.projectId]);
    expect(rows.map((r: { user_id: string }) => r.user_id)).toEqual(['u_paying', 'u_whale']);
    const res = await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest));
    expect(res.body.data).toEqual(expect.objectContaining({ occurrences: 5, affected: { users: 2, payingUsers: 2 } }));
  });
});
