import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '#identity';
import { ErrorRevenueRefreshJob } from '#reporting';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer, identifyUsers, secretKeyWithScopes } from '../support/read-api.js';
import { seedCustomerRevenue } from '../support/factories/revenue.js';
import { enableCardRail } from '../support/factories/rails.js';
import { testScope } from '../support/scopes.js';

/**
 * What an error costs in revenue (paying users, affected users with revenue at risk first)
 * is kept per fingerprint, at most 60 s old on the service clock: reads answer from it, the
 * refresh job works out again the ones read lately, an erasure drops the scope's. The ledger
 * rows are seeded directly (the rails' notifications that write them have their own tests).
 */
describe('error revenue snapshots', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let identityKey: string;
  const fingerprint = 'c0ffee01';
  const customers: Record<string, string> = {};
  const seedRevenue = (userId: string, monthlyMinor: number) => seedCustomerRevenue(t.dataSource, testScope(p.projectId), customers[userId], monthlyMinor);
  const impact = async () => (await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest))).body.data.affected;
  const affected = async () =>
    (await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}`).set(bearer(identityKey))).body.data.rows.map(
      (r: { userId: string; monthlyRevenueCents: number }) => [r.userId, r.monthlyRevenueCents],
    );
  const snapshots = () =>
    t.dataSource.query(`SELECT fingerprint, paying_users, computed_at_ms::float8 AS computed FROM error_revenue_snapshots WHERE project_id = $1`, [
      p.projectId,
    ]);

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    Object.assign(customers, await identifyUsers(t, p, ['u_a', 'u_b', 'u_c']));
    identityKey = await secretKeyWithScopes(t, p.keyIds.skTest, ['reporting:identity', 'errors:read']);
    const now = t.clock.nowMs();
    const res = await t.http
      .post('/v1/events')
      .set(keyHeaders(p, p.keys.skTest))
      .send({
        events: ['u_a', 'u_b', 'u_c'].map((userId, i) => ({
          name: 'error.unhandled',
          eventId: `err_${randomUUID()}`,
          timestamp: now - 3000 + i * 1000,
          level: 'error',
          developerUserId: userId,
          anonymousId: `anon_${userId}`,
          properties: { fingerprint, message: 'boom', errorType: 'TypeError' },
        })),
      });
    expect(res.status).toBe(202);
    await enableCardRail(t, p.projectId);
    await seedRevenue('u_a', 900);
  });
  afterAll(async () => t.close());

  it('a made-up fingerprint keeps no snapshot', async () => {
    const res = await t.http.get('/v1/errors/affected?fingerprint=0badf00d').set(bearer(identityKey));
    expect(res.body.data.rows).toEqual([]);
    expect((await t.http.get('/v1/errors?fingerprint=0badf00d').set(bearer(p.keys.skTest))).body.data).toBeNull();
    expect(await snapshots()).toEqual([]);
  });

  it('the first read works the figures out and keeps them; both reads answer from one snapshot', async () => {
    expect(await impact()).toEqual({ users: 3, payingUsers: 1 });
    expect(await affected()).toEqual([
      ['u_a', 900],
      ['u_c', 0],
      ['u_b', 0],
    ]);
    expect(await snapshots()).toEqual([{ fingerprint, paying_users: 1, computed: expect.any(Number) }]);
  });

  it('a change in the ledger shows within 60 s: at once after the refresh job, or when the snapshot ages', async () => {
    await seedRevenue('u_b', 4_900);
    // Within the bound, reads may still answer the snapshot.
    expect(await impact()).toEqual({ users: 3, payingUsers: 1 });
    // The job leaves a snapshot younger than 30 s alone, then works it out again.
    expect(await t.app.get(ErrorRevenueRefreshJob).refreshOnce()).toBe(0);
    t.clock.advance(31);
    expect(await t.app.get(ErrorRevenueRefreshJob).refreshOnce()).toBe(1);
    expect(await impact()).toEqual({ users: 3, payingUsers: 2 });
    expect(await affected()).toEqual([
      ['u_b', 4_900],
      ['u_a', 900],
      ['u_c', 0],
    ]);
    // Without the job, a read of a snapshot older than 60 s works it out itself.
    await seedRevenue('u_c', 100);
    t.clock.advance(61);
    expect(await impact()).toEqual({ users: 3, payingUsers: 3 });
  });

  it('paced, the job looks the affected users up a slice at a time, resting before each, to the same figures; a spent budget or a stopping replica starts none', async () => {
    const job = t.app.get(ErrorRevenueRefreshJob);
    await seedRevenue('u_a', 1_200);
    t.clock.advance(31);
    expect(await job.refreshOnce({ budgetMs: 0 })).toBe(0);
    // Nor once the replica is stopping.
    expect(await job.refreshOnce({ stopping: () => true })).toBe(0);
    let rests = 0;
    const pace = { sliceUsers: 2, rest: async () => void rests++ };
    expect(await job.refreshOnce({ pace, budgetMs: 10_000 })).toBe(1);
    // Three affected users, two per slice.
    expect(rests).toBe(2);
    expect(await impact()).toEqual({ users: 3, payingUsers: 3 });
    expect(await affected()).toEqual([
      ['u_b', 4_900],
      ['u_a', 1_200],
      ['u_c', 100],
    ]);
  });

  it('a read that finds the snapshot old while the job works it out paced joins it and hurries it: no rest after the read came', async () => {
    const job = t.app.get(ErrorRevenueRefreshJob);
    t.clock.advance(61);
    let rests = 0;
    let read: Promise<unknown> | undefined;
    const pace = {
      sliceUsers: 1,
      rest: async () => {
        if (++rests > 1) throw new Error('rested after a read joined');
        read = impact();
        // The read reaches the service and finds the work in progress.
        await new Promise((resolve) => setTimeout(resolve, 300));
      },
    };
    expect(await job.refreshOnce({ pace })).toBe(1);
    expect(await read).toEqual({ users: 3, payingUsers: 3 });
    expect(rests).toBe(1);
  });

  it('the job keeps fresh only the snapshots read in the last 10 minutes, and drops those unread for a day', async () => {
    t.clock.advance(11 * 60);
    expect(await t.app.get(ErrorRevenueRefreshJob).refreshOnce()).toBe(0);
    expect(await snapshots()).toHaveLength(1);
    t.clock.advance(86_400);
    await t.app.get(ErrorRevenueRefreshJob).refreshOnce();
    expect(await snapshots()).toEqual([]);
    // Read again: kept again.
    expect(await impact()).toEqual({ users: 3, payingUsers: 3 });
    expect(await snapshots()).toHaveLength(1);
  });

  it("an erasure drops the scope's snapshots: the forgotten user is gone from the next read at once", async () => {
    const forgot = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId: customers.u_c });
    expect(forgot.status).toBe(200);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    expect(await snapshots()).toEqual([]);
    expect(await impact()).toEqual({ users: 2, payingUsers: 2 });
    expect((await affected()).map(([userId]: [string]) => userId)).toEqual(['u_b', 'u_a']);
  });

  it('an erasure while the job works a snapshot out paced: what it read is not kept, and the next read answers without the user', async () => {
    const job = t.app.get(ErrorRevenueRefreshJob);
    // Within 10 s of an erasure nothing is kept; later, a read keeps its snapshot again.
    expect(await snapshots()).toEqual([]);
    t.clock.advance(11);
    expect(await impact()).toEqual({ users: 2, payingUsers: 2 });
    expect(await snapshots()).toHaveLength(1);
    t.clock.advance(31);
    let rests = 0;
    const pace = {
      sliceUsers: 1,
      rest: async () => {
        // The affected users (u_a among them) are read; u_a is erased before the second slice.
        if (++rests !== 2) return;
        expect((await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId: customers.u_a })).status).toBe(200);
        await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
      },
    };
    expect(await job.refreshOnce({ pace })).toBe(1);
    expect(rests).toBe(2);
    expect(await snapshots()).toEqual([]);
    expect((await affected()).map(([userId]: [string]) => userId)).toEqual(['u_b']);
  });
});
