import { CustomerDirectory } from '#identity';
import { type ProjectFixture } from '../support/fixtures.js';
import { explain, loadIdentityVolume } from '../support/identity-volume.js';
import { aid, uid } from '../support/id-tokens.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { identityHarness, UUID } from '../support/harness/identity.js';
import { LOCK_CUSTOMER_SQL, findAliasesSql } from '../../libs/identity/src/customers/identity.repository.js';

describe('identity: POST /v1/identify (request rules, alias graph, traits, hot queries)', () => {
  const h = identityHarness();
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  beforeAll(() => {
    ({ t, p, other } = h);
  });
  const { sandbox, identify, forget, customerRow, aliasRows, mergeReviews } = h;

  describe('POST /v1/identify: request rules', () => {
    it.each([
      ['missing userId', { anonymousId: 'a1' }, 'userId'],
      ['missing anonymousId', { userId: 'u1' }, 'anonymousId'],
      ['userId with a space', { userId: 'has space', anonymousId: 'a1' }, 'userId'],
      ['userId over 256 chars', { userId: 'u'.repeat(257), anonymousId: 'a1' }, 'userId'],
      ['empty userId', { userId: '', anonymousId: 'a1' }, 'userId'],
      ['anonymousId with a dot', { userId: 'u1', anonymousId: 'a.1' }, 'anonymousId'],
      ['anonymousId over 128 chars', { userId: 'u1', anonymousId: 'a'.repeat(129) }, 'anonymousId'],
      ['numeric userId', { userId: 42, anonymousId: 'a1' }, 'userId'],
      ['non-UUID appAccountToken', { userId: 'u1', anonymousId: 'a1', appAccountToken: 'not-a-uuid' }, 'appAccountToken'],
      ['uppercase UUID appAccountToken', { userId: 'u1', anonymousId: 'a1', appAccountToken: UUID.toUpperCase() }, 'appAccountToken'],
    ])('%s: 400 invalid_param_value', async (_label, body, field) => {
      const res = await identify(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_param_value' });
      expect(res.body.error.message).toContain(field);
    });

    it('accepts every allowed character', async () => {
      const res = await identify({ userId: uid('A-z_0.9:x@y'), anonymousId: aid('A-z_09') });
      expect(res.status).toBe(200);
    });

    it('needs a key', async () => {
      const res = await t.http.post('/v1/identify').send({ userId: 'u', anonymousId: 'a' });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('missing_api_key');
    });
  });

  describe('alias graph', () => {
    it('neither id known: creates one cdcust_ customer and links both (self-asserted)', async () => {
      const userId = uid();
      const anonymousId = aid();
      const res = await identify({ userId, anonymousId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
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
      expect(await aliasRows(res.body.serviceCustomerId)).toEqual([
        { type: 'anonymous', value: anonymousId, assurance: 'self_asserted' },
        { type: 'developer', value: userId, assurance: 'self_asserted' },
      ]);
    });

    it('the same pair again is an idempotent 200 (also on the legacy and unprefixed paths, and with the secret key)', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const first = await identify(body);
      const again = await identify(body);
      const legacy = await identify(body, p.keys.pubTest, p, '/v1/identity/alias');
      const bare = await identify(body, p.keys.pubTest, p, '/identify');
      const secret = await identify(body, p.keys.skTest);
      for (const res of [again, legacy, bare, secret]) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual(first.body);
      }
      expect(await aliasRows(first.body.serviceCustomerId)).toHaveLength(2);
    });

    it('one known id links the other', async () => {
      const userId = uid();
      const anonymousId = aid();
      const first = await identify({ userId, anonymousId });
      const secondDevice = aid('device2');
      const byUser = await identify({ userId, anonymousId: secondDevice });
      expect(byUser.body).toMatchObject({ serviceCustomerId: first.body.serviceCustomerId, mergePending: false });
      const otherLogin = uid('login2');
      const byDevice = await identify({ userId: otherLogin, anonymousId });
      expect(byDevice.body).toMatchObject({ serviceCustomerId: first.body.serviceCustomerId, mergePending: false });
      expect((await aliasRows(first.body.serviceCustomerId)).map((r: { value: string }) => r.value).sort()).toEqual(
        [userId, anonymousId, secondDevice, otherLogin].sort(),
      );
    });

    it("lookups stay inside the key's project and environment", async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const sandboxRes = await identify(body);
      const live = await identify(body, p.keys.pubLive);
      const otherProject = await identify(body, other.keys.pubTest, other);
      expect(live.body.env).toBe('production');
      const ids = new Set([sandboxRes.body.serviceCustomerId, live.body.serviceCustomerId, otherProject.body.serviceCustomerId]);
      expect(ids.size).toBe(3);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId(testScope(p.projectId, 'production'), { userId: body.userId })).toBe(live.body.serviceCustomerId);
      expect(await directory.findCustomerId(sandbox(), { customerId: live.body.serviceCustomerId })).toBeNull();
      expect(await directory.isActiveCustomer(sandbox(), sandboxRes.body.serviceCustomerId)).toBe(true);
      expect(await directory.isActiveCustomer(sandbox(other), sandboxRes.body.serviceCustomerId)).toBe(false);
    });

    it('both known on different customers: developer customer is canonical, mergePending, queued once, nothing merged', async () => {
      const [uA, aA, uB, aB] = [uid('ua'), aid('aa'), uid('ub'), aid('ab')];
      const c1 = (await identify({ userId: uA, anonymousId: aA })).body.serviceCustomerId;
      const c2 = (await identify({ userId: uB, anonymousId: aB })).body.serviceCustomerId;
      expect(c1).not.toBe(c2);

      const conflict = await identify({ userId: uA, anonymousId: aB });
      expect(conflict.status).toBe(200);
      expect(conflict.body).toEqual({
        object: 'alias_result',
        serviceCustomerId: c1,
        crossdeckCustomerId: c1,
        linked: [{ type: 'developer', id: uA }],
        mergePending: true,
        env: 'sandbox',
      });
      const again = await identify({ userId: uA, anonymousId: aB });
      expect(again.body).toEqual(conflict.body);
      // The same two customers conflicting the other way round is the same review.
      const reverse = await identify({ userId: uB, anonymousId: aA });
      expect(reverse.body).toMatchObject({ serviceCustomerId: c2, crossdeckCustomerId: c2, mergePending: true });

      // Nothing merged: each id still resolves to its own customer.
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aB })).toBe(c2);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aA })).toBe(c1);

      const list = await mergeReviews();
      expect(list.status).toBe(200);
      expect(list.body.object).toBe('list');
      const mine = list.body.data.filter((r: { canonicalCustomerId: string; otherCustomerId: string }) => [c1, c2].includes(r.canonicalCustomerId));
      expect(mine).toEqual([
        {
          id: expect.stringMatching(/^mrev_/),
          env: 'sandbox',
          developerUserId: uA,
          anonymousId: aB,
          canonicalCustomerId: c1,
          otherCustomerId: c2,
          status: 'pending',
          createdAt: expect.any(Number),
        },
      ]);
      expect((await mergeReviews(p, 'production')).body.data).toEqual([]);
    });

    it('merge-reviews and erasures: unknown project 404, bad env 400, operator token required', async () => {
      const missing = await t.http.get('/admin/v1/projects/proj_nope/merge-reviews?env=sandbox').set(operatorAuth());
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('resource_missing');
      expect((await t.http.get('/admin/v1/projects/proj_nope/erasures').set(operatorAuth())).status).toBe(404);
      const bad = await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews?env=staging`).set(operatorAuth());
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_param_value');
      expect((await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews`)).status).toBe(401);
    });

    it('concurrent identify calls for the same ids never create two customers', async () => {
      const userId = uid('race');
      const anonymousId = aid('race');
      const results = await Promise.all(Array.from({ length: 12 }, () => identify({ userId, anonymousId })));
      for (const res of results) expect(res.status).toBe(200);
      expect(new Set(results.map((r) => r.body.serviceCustomerId)).size).toBe(1);
      const rows = await t.dataSource.query(
        `SELECT DISTINCT customer_id FROM customer_aliases WHERE project_id = $1 AND env = 'sandbox' AND value = ANY($2::text[])`,
        [p.projectId, [userId, anonymousId]],
      );
      expect(rows).toHaveLength(1);
    });

    it('concurrent calls sharing only the user id (new devices) converge on one customer', async () => {
      const userId = uid('race2');
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => identify({ userId, anonymousId: aid(`dev${i}`) })));
      for (const res of results) expect(res.status).toBe(200);
      const ids = new Set(results.map((r) => r.body.serviceCustomerId));
      expect(ids.size).toBe(1);
      expect(await aliasRows([...ids][0])).toHaveLength(11);
      const orphans = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM customers c WHERE project_id = $1 AND NOT EXISTS (SELECT 1 FROM customer_aliases a WHERE a.customer_id = c.id)`,
        [p.projectId],
      );
      expect(orphans[0].n).toBe(0);
    });

    it('appAccountToken binds the iOS rail to the customer', async () => {
      const res = await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(res.status).toBe(200);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(res.body.serviceCustomerId);
      // A token already bound stays with its customer.
      const otherCustomer = await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(otherCustomer.status).toBe(200);
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(res.body.serviceCustomerId);
    });
  });

  describe('traits and email', () => {
    it('accepts the largest traits the rules allow even when every character is \\u-escaped', async () => {
      const traits: Record<string, string> = {};
      for (let i = 0; i < 32; i++) traits[`${'k'.repeat(120)}${i}`] = '\u00e9'.repeat(1024);
      // As a client whose JSON encoder escapes non-ASCII (Python's default) sends it: about 200 KB.
      const text = JSON.stringify({ userId: uid(), anonymousId: aid(), traits }).replace(
        /[\u0080-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
      expect(text.length).toBeGreaterThan(190_000);
      const res = await t.http
        .post('/v1/identify')
        .set({ Authorization: `Bearer ${p.keys.skTest}` })
        .set('Content-Type', 'application/json')
        .send(text);
      expect(res.status).toBe(200);
      expect(Object.values((await customerRow(res.body.serviceCustomerId)).traits)).toEqual(Array(32).fill('\u00e9'.repeat(1024)));
    });

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
      expect(first.status).toBe(200);
      let row = await customerRow(first.body.serviceCustomerId);
      expect(Object.keys(row.traits)).toHaveLength(32);
      expect(row.traits).toMatchObject({ plan: 'pro', seats: 3, beta: true, nickname: null, edge: 'y'.repeat(1024), k0: 0, k26: 26 });
      expect(row.traits.nested).toBeUndefined();
      expect(row.traits.list).toBeUndefined();
      expect(row.traits.long).toBeUndefined();
      expect(row.traits.k27).toBeUndefined();
      expect(row.email).toBe('self@example.com');

      const second = await identify({ ...body, traits: { plan: 'team', brandNew: 'dropped: map is full' } });
      expect(second.status).toBe(200);
      row = await customerRow(first.body.serviceCustomerId);
      expect(row.traits.plan).toBe('team');
      expect(row.traits.seats).toBe(3);
      expect(row.traits.brandNew).toBeUndefined();
      expect(Object.keys(row.traits)).toHaveLength(32);
    });

    it('text PostgreSQL cannot store: a NUL or unpaired surrogate in traits or email is 400 naming the field (never a 500, never dropped silently)', async () => {
      const userId = uid();
      for (const [traits, field] of [
        [{ keep: 'yes', plan: 'a\u0000b' }, 'traits.plan'],
        [{ keep: 'yes', plan: 'x\uD800' }, 'traits.plan'],
        [{ keep: 'yes', 'k\u0000': 1 }, 'traits (a key)'],
      ] as const) {
        const res = await identify({ userId, anonymousId: aid(), traits });
        expect(res.status).toBe(400);
        expect(res.body.error).toEqual(
          expect.objectContaining({ code: 'invalid_param_value', message: `${field}: must not contain NUL characters or unpaired surrogates` }),
        );
      }
      expect((await t.dataSource.query(`SELECT 1 FROM customer_aliases WHERE project_id = $1 AND value = $2`, [p.projectId, userId])).length).toBe(0);
      const bad = await identify({ userId: uid(), anonymousId: aid(), email: 'a\u0000@example.com' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_param_value');
      const badForget = await forget({ customerId: 'cdcust_\u0000' });
      expect(badForget.status).toBe(400);
      expect(badForget.body.error.code).toBe('invalid_param_value');
    });

    it('traits of the wrong type are dropped, not rejected', async () => {
      for (const traits of ['string', 7, [1, 2], null]) {
        const res = await identify({ userId: uid(), anonymousId: aid(), traits });
        expect(res.status).toBe(200);
        expect((await customerRow(res.body.serviceCustomerId)).traits).toEqual({});
      }
    });

    it('additive merge across calls keeps earlier keys', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const a = await identify({ ...body, traits: { a: 1 } });
      await identify({ ...body, traits: { b: 2 } });
      expect((await customerRow(a.body.serviceCustomerId)).traits).toEqual({ a: 1, b: 2 });
    });
  });

  describe('hot queries use indexes', () => {
    let pid = '';
    beforeAll(async () => {
      pid = await loadIdentityVolume(t);
    }, 60_000);

    const plan = (sql: string, params: unknown[]) => explain(t, sql, params);

    it('identify: alias lookup by (project, env, type, value) and customer lock by id', async () => {
      // The repository's own statements, not copies.
      const aliasPlan = await plan(findAliasesSql(2), [pid, 'sandbox', 'developer', 'u', 'anonymous', 'a']);
      expect(aliasPlan).toMatch(/(Bitmap )?Index (Only )?Scan (using|on) customer_aliases_pk/);
      expect(aliasPlan).toMatch(/Index Scan using customers_(pkey|scope_id_uq)/);
      expect(aliasPlan).not.toMatch(/Seq Scan/);
      const lockPlan = await plan(LOCK_CUSTOMER_SQL, [pid, 'sandbox', 'cdcust_x']);
      expect(lockPlan).toMatch(/Index (Only )?Scan using customers_(pkey|scope_id_uq)/);
    });
  });
});
