import type { TenantScope } from '#platform';
import { CustomerDirectory, ErasureHooks, ErasureWorker, type ErasureSubject, IdentifyService, IdentityModule } from '#identity';
import type { ForgetDto } from '../../libs/identity/src/forget/forget.dto.js';
import { ForgetService } from '../../libs/identity/src/forget/forget.service.js';
import { IdentityAdminService } from '../../libs/identity/src/operator/identity-admin.service.js';
import { DAY } from '../support/harness/identity.js';
import { aid, uid } from '../support/id-tokens.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

type IdentifyBody = Parameters<IdentifyService['identify']>[1];

/**
 * Forget's and the retention worker's rules on the identity context alone (platform, keys,
 * audit, identity) over the test database, no HTTP: one audit decision however often and in
 * whatever order the request comes, a forgotten customer's ids unknown to identify, what the
 * erasure deletes and keeps, and a failing erasure hook. The answers, the authority of a
 * publishable key (idTokens, 401s) and the isolation between projects stay in
 * test/e2e/identity-forget.e2e-spec.ts.
 */
describe('medium: ForgetService and the retention worker', () => {
  let m: MediumContext;
  let projectId: string;
  const sandbox = (): TenantScope => testScope(projectId, 'sandbox');

  beforeAll(async () => {
    m = await createMediumContext({ modules: [IdentityModule] });
    projectId = await m.newProject();
  });
  afterAll(() => m?.close());

  const identify = (body: Record<string, unknown>) => m.get(IdentifyService).identify(m.newAuth(sandbox()), body as unknown as IdentifyBody);
  /** Forget with a secret key unless told (a publishable key carries no proof of its own). */
  const forget = (body: ForgetDto, kind: 'secret' | 'publishable' = 'secret') => m.get(ForgetService).forget(m.newAuth(sandbox(), { kind }), body);
  const runWorker = () => m.get(ErasureWorker).runOnce({ projectId });
  const erasureQueue = async () => (await m.get(IdentityAdminService).erasures(projectId, 'sandbox')).data;

  async function newCustomer() {
    const userId = uid('gone');
    const anonymousId = aid('gone');
    const result = await identify({ userId, anonymousId, email: 'gone@example.com', traits: { plan: 'pro' } });
    return { userId, anonymousId, customerId: result.serviceCustomerId };
  }
  const forgetAudits = (customerId: string) =>
    m.dataSource.query(`SELECT event_id, decision, reason, actor FROM audit_entries WHERE customer_id = $1 AND event_type = 'customer.forget_requested'`, [
      customerId,
    ]);
  const customerRow = async (id: string) =>
    (await m.dataSource.query(`SELECT id, email, first_name, traits, forgotten_at FROM customers WHERE id = $1`, [id]))[0];
  const aliasRows = (customerId: string) =>
    m.dataSource.query(`SELECT type, value, assurance FROM customer_aliases WHERE customer_id = $1 ORDER BY type, value`, [customerId]);

  describe('one decision', () => {
    it('is idempotent: repeating (by any hint, even in parallel) returns the same answer and audits one decision', async () => {
      const c = await newCustomer();
      const first = await forget({ userId: c.userId });
      const results = await Promise.all([
        forget({ userId: c.userId }),
        forget({ customerId: c.customerId }),
        forget({ anonymousId: c.anonymousId }, 'publishable'),
      ]);
      for (const result of results) expect(result).toEqual(first);
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
    });

    it('parallel first requests still audit exactly one decision', async () => {
      const c = await newCustomer();
      const results = await Promise.all(Array.from({ length: 6 }, () => forget({ customerId: c.customerId })));
      expect(new Set(results.map((r) => r.queuedAt)).size).toBe(1);
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
    });

    it("a forgotten customer's ids are unknown to identify: a returning user gets a new customer", async () => {
      const c = await newCustomer();
      await forget({ customerId: c.customerId });
      const back = await identify({ userId: c.userId, anonymousId: c.anonymousId });
      expect(back.serviceCustomerId).not.toBe(c.customerId);
      expect(back.mergePending).toBe(false);
      expect(await m.get(CustomerDirectory).findCustomerId(sandbox(), { userId: c.userId })).toBe(back.serviceCustomerId);
    });
  });

  describe('the retention worker', () => {
    it('erases personal data after the clock moves on, calls the erasure hooks, keeps rail records and the audit entry', async () => {
      const seen: ErasureSubject[] = [];
      m.get(ErasureHooks).register('test-recorder', async (_scope, subject) => {
        seen.push(subject);
        await m.sql.one('SELECT 1');
      });
      const c = await newCustomer();
      await identify({ userId: c.userId, anonymousId: aid('second'), appAccountToken: '0e3a4b2c-1d2e-4f30-8a1b-2c3d4e5f6a7b' });
      const d = await newCustomer();
      await identify({ userId: uid(), anonymousId: d.anonymousId }); // d gets a second developer id
      const forgot = await forget({ customerId: c.customerId });
      expect(forgot.serviceCustomerId).toBe(c.customerId);
      expect((await aliasRows(c.customerId)).length).toBe(4);

      m.clock.advance(DAY);
      const [a, b] = await Promise.all([runWorker(), runWorker()]);
      expect(a + b).toBeGreaterThanOrEqual(1);

      const mine = seen.filter((s) => s.customerId === c.customerId);
      expect(mine).toHaveLength(1);
      expect(mine[0].userIds).toEqual([c.userId]);
      expect(mine[0].anonymousIds.sort()).toHaveLength(2);

      expect(await aliasRows(c.customerId)).toEqual([
        { type: 'ios_app_account_token', value: '0e3a4b2c-1d2e-4f30-8a1b-2c3d4e5f6a7b', assurance: 'self_asserted' },
      ]);
      const row = await customerRow(c.customerId);
      expect(row).toMatchObject({ id: c.customerId, email: null, first_name: null, traits: {} });
      expect(row.forgotten_at).not.toBeNull();
      const subject = await m.dataSource.query(`SELECT subject, status FROM erasures WHERE customer_id = $1`, [c.customerId]);
      expect(subject[0]).toEqual({ subject: null, status: 'deleted' });
      expect(await erasureQueue()).toContainEqual({
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        env: 'sandbox',
        queuedAt: forgot.queuedAt,
        status: 'deleted',
      });
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
      // Other customers are untouched.
      expect((await aliasRows(d.customerId)).length).toBe(3);

      // Nothing left to do; repeating the forget is still the same answer.
      expect(await runWorker()).toBe(0);
      expect(await forget({ customerId: c.customerId })).toEqual(forgot);
    });

    it('a failing hook leaves the erasure queued for the next run', async () => {
      const hooks = m.get(ErasureHooks);
      let fail = true;
      hooks.register('test-flaky', async () => {
        if (fail) throw new Error('telemetry store unavailable');
      });
      try {
        const c = await newCustomer();
        await forget({ customerId: c.customerId });
        await runWorker();
        let rows = await m.dataSource.query(`SELECT status, attempts FROM erasures WHERE customer_id = $1`, [c.customerId]);
        expect(rows[0]).toEqual({ status: 'queued', attempts: 1 });
        expect((await aliasRows(c.customerId)).length).toBe(2);
        fail = false;
        expect(await runWorker()).toBeGreaterThanOrEqual(1);
        rows = await m.dataSource.query(`SELECT status FROM erasures WHERE customer_id = $1`, [c.customerId]);
        expect(rows[0].status).toBe('deleted');
      } finally {
        hooks.register('test-flaky', async () => undefined);
      }
    });
  });
});
