import type { TenantScope } from '#platform';
import { CustomerDirectory, IdentifyService, IdentityModule } from '#identity';
import { aid, uid } from '../support/id-tokens.js';
import { UUID } from '../support/harness/identity.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

type IdentifyBody = Parameters<IdentifyService['identify']>[1];

/**
 * Identify's rules on the identity context alone (platform, keys, audit, identity) over the test
 * database, no HTTP: the alias graph (neither, one or both ids known), the scope of lookups,
 * concurrent calls converging, and how traits are sanitised and merged. The request rules,
 * paths and keys stay in test/e2e/identity-identify.e2e-spec.ts.
 */
describe('medium: IdentifyService (alias graph, scopes, concurrency, traits)', () => {
  let m: MediumContext;
  let service: IdentifyService;
  let directory: CustomerDirectory;
  let projectId: string;
  let otherProjectId: string;
  const sandbox = (project = projectId): TenantScope => testScope(project, 'sandbox');
  const identify = (body: Record<string, unknown>, scope = sandbox()) => service.identify(m.newAuth(scope), body as unknown as IdentifyBody);

  beforeAll(async () => {
    m = await createMediumContext({ modules: [IdentityModule] });
    service = m.get(IdentifyService);
    directory = m.get(CustomerDirectory);
    projectId = await m.newProject();
    otherProjectId = await m.newProject();
  });
  afterAll(() => m?.close());

  const customerRow = async (id: string) => (await m.dataSource.query(`SELECT id, email, traits FROM customers WHERE id = $1`, [id]))[0];
  const aliasRows = (customerId: string) =>
    m.dataSource.query(`SELECT type, value, assurance FROM customer_aliases WHERE customer_id = $1 ORDER BY type, value`, [customerId]);

  describe('alias graph', () => {
    it('neither id known: creates one cdcust_ customer and links both (self-asserted)', async () => {
      const userId = uid();
      const anonymousId = aid();
      const result = await identify({ userId, anonymousId });
      expect(result).toEqual({
        object: 'alias_result',
        serviceCustomerId: expect.stringMatching(/^cdcust_[A-Za-z0-9]{24}$/),
        crossdeckCustomerId: expect.stringMatching(/^cdcust_[A-Za-z0-9]{24}$/),
        linked: [
          { type: 'developer', id: userId },
          { type: 'anonymous', id: anonymousId },
        ],
        mergePending: false,
        env: 'sandbox',
      });
      expect(await aliasRows(result.serviceCustomerId)).toEqual([
        { type: 'anonymous', value: anonymousId, assurance: 'self_asserted' },
        { type: 'developer', value: userId, assurance: 'self_asserted' },
      ]);
    });

    it('one known id links the other', async () => {
      const userId = uid();
      const anonymousId = aid();
      const first = await identify({ userId, anonymousId });
      const secondDevice = aid('device2');
      expect(await identify({ userId, anonymousId: secondDevice })).toMatchObject({ serviceCustomerId: first.serviceCustomerId, mergePending: false });
      const otherLogin = uid('login2');
      expect(await identify({ userId: otherLogin, anonymousId })).toMatchObject({ serviceCustomerId: first.serviceCustomerId, mergePending: false });
      expect((await aliasRows(first.serviceCustomerId)).map((r: { value: string }) => r.value).sort()).toEqual(
        [userId, anonymousId, secondDevice, otherLogin].sort(),
      );
    });

    it("lookups stay inside the caller's project and environment", async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const sandboxResult = await identify(body);
      const live = await identify(body, testScope(projectId, 'production'));
      const otherProject = await identify(body, sandbox(otherProjectId));
      expect(live.env).toBe('production');
      expect(new Set([sandboxResult.serviceCustomerId, live.serviceCustomerId, otherProject.serviceCustomerId]).size).toBe(3);
      expect(await directory.findCustomerId(testScope(projectId, 'production'), { userId: body.userId })).toBe(live.serviceCustomerId);
      expect(await directory.findCustomerId(sandbox(), { customerId: live.serviceCustomerId })).toBeNull();
      expect(await directory.isActiveCustomer(sandbox(), sandboxResult.serviceCustomerId)).toBe(true);
      expect(await directory.isActiveCustomer(sandbox(otherProjectId), sandboxResult.serviceCustomerId)).toBe(false);
    });

    it('both known on different customers: developer customer is canonical, mergePending, queued once, nothing merged', async () => {
      const [uA, aA, uB, aB] = [uid('ua'), aid('aa'), uid('ub'), aid('ab')];
      const c1 = (await identify({ userId: uA, anonymousId: aA })).serviceCustomerId;
      const c2 = (await identify({ userId: uB, anonymousId: aB })).serviceCustomerId;
      expect(c1).not.toBe(c2);

      const conflict = await identify({ userId: uA, anonymousId: aB });
      expect(conflict).toEqual({
        object: 'alias_result',
        serviceCustomerId: c1,
        crossdeckCustomerId: c1,
        linked: [{ type: 'developer', id: uA }],
        mergePending: true,
        env: 'sandbox',
      });
      expect(await identify({ userId: uA, anonymousId: aB })).toEqual(conflict);
      // The same two customers conflicting the other way round is the same review.
      expect(await identify({ userId: uB, anonymousId: aA })).toMatchObject({ serviceCustomerId: c2, crossdeckCustomerId: c2, mergePending: true });

      // Nothing merged: each id still resolves to its own customer.
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aB })).toBe(c2);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aA })).toBe(c1);

      const reviews = await m.dataSource.query(
        `SELECT id, env, developer_user_id AS "developerUserId", anonymous_id AS "anonymousId", canonical_customer_id AS "canonicalCustomerId",
                other_customer_id AS "otherCustomerId", status, created_at AS "createdAt"
           FROM merge_reviews WHERE project_id = $1 AND canonical_customer_id = ANY($2::text[])`,
        [projectId, [c1, c2]],
      );
      expect(reviews).toEqual([
        {
          id: expect.stringMatching(/^mrev_/),
          env: 'sandbox',
          developerUserId: uA,
          anonymousId: aB,
          canonicalCustomerId: c1,
          otherCustomerId: c2,
          status: 'pending',
          createdAt: expect.any(Date),
        },
      ]);
      expect(await m.dataSource.query(`SELECT id FROM merge_reviews WHERE project_id = $1 AND env = 'production'`, [projectId])).toEqual([]);
    });

    it('concurrent identify calls for the same ids never create two customers', async () => {
      const userId = uid('race');
      const anonymousId = aid('race');
      const results = await Promise.all(Array.from({ length: 12 }, () => identify({ userId, anonymousId })));
      expect(new Set(results.map((r) => r.serviceCustomerId)).size).toBe(1);
      const rows = await m.dataSource.query(
        `SELECT DISTINCT customer_id FROM customer_aliases WHERE project_id = $1 AND env = 'sandbox' AND value = ANY($2::text[])`,
        [projectId, [userId, anonymousId]],
      );
      expect(rows).toHaveLength(1);
    });

    it('concurrent calls sharing only the user id (new devices) converge on one customer', async () => {
      const userId = uid('race2');
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => identify({ userId, anonymousId: aid(`dev${i}`) })));
      const ids = new Set(results.map((r) => r.serviceCustomerId));
      expect(ids.size).toBe(1);
      expect(await aliasRows([...ids][0])).toHaveLength(11);
      const orphans = await m.dataSource.query(
        `SELECT count(*)::int AS n FROM customers c WHERE project_id = $1 AND NOT EXISTS (SELECT 1 FROM customer_aliases a WHERE a.customer_id = c.id)`,
        [projectId],
      );
      expect(orphans[0].n).toBe(0);
    });

    it('appAccountToken binds the iOS rail to the customer', async () => {
      const first = await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(first.serviceCustomerId);
      // A token already bound stays with its customer.
      await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(first.serviceCustomerId);
    });
  });

  describe('traits and email', () => {
    it('sanitises traits (never rejects) and merges them additively per key', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const traits: Record<string, unknown> = {
        plan: 'pro',
        seats: 3,
        beta: true,
        nickname: null,
        nested: { a: 1 },
        list: [1, 2],
        long: 'x'.repeat(1025),
        edge: 'y'.repeat(1024),
      };
      for (let i = 0; i < 30; i++) traits[`k${i}`] = i;
      const first = await identify({ ...body, traits, email: 'self@example.com' });
      let row = await customerRow(first.serviceCustomerId);
      expect(Object.keys(row.traits)).toHaveLength(32);
      expect(row.traits).toMatchObject({ plan: 'pro', seats: 3, beta: true, nickname: null, edge: 'y'.repeat(1024), k0: 0, k26: 26 });
      expect(row.traits.nested).toBeUndefined();
      expect(row.traits.list).toBeUndefined();
      expect(row.traits.long).toBeUndefined();
      expect(row.traits.k27).toBeUndefined();
      expect(row.email).toBe('self@example.com');

      await identify({ ...body, traits: { plan: 'team', brandNew: 'dropped: map is full' } });
      row = await customerRow(first.serviceCustomerId);
      expect(row.traits.plan).toBe('team');
      expect(row.traits.seats).toBe(3);
      expect(row.traits.brandNew).toBeUndefined();
      expect(Object.keys(row.traits)).toHaveLength(32);
    });

    it('traits of the wrong type are dropped, not rejected', async () => {
      for (const traits of ['string', 7, [1, 2], null]) {
        const result = await identify({ userId: uid(), anonymousId: aid(), traits });
        expect((await customerRow(result.serviceCustomerId)).traits).toEqual({});
      }
    });

    it('additive merge across calls keeps earlier keys', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const a = await identify({ ...body, traits: { a: 1 } });
      await identify({ ...body, traits: { b: 2 } });
      expect((await customerRow(a.serviceCustomerId)).traits).toEqual({ a: 1, b: 2 });
    });
  });
});
