import { type ProjectFixture } from '../support/fixtures.js';
import { explain, loadIdentityVolume } from '../support/identity-volume.js';
import { aid, uid } from '../support/id-tokens.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { identityHarness, UUID } from '../support/harness/identity.js';
import { LOCK_CUSTOMER_SQL, findAliasesSql } from '../../libs/identity/src/customers/identity.repository.js';

describe('identity: POST /v1/identify (request rules, paths, merge-review reads, traits bounds, hot queries)', () => {
  const h = identityHarness();
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(() => {
    ({ t, p } = h);
  });
  const { identify, forget, customerRow, aliasRows, mergeReviews } = h;

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

    it('merge-reviews lists the pending review of a conflict in the list shape, per environment', async () => {
      const [uA, aA, uB, aB] = [uid('ua'), aid('aa'), uid('ub'), aid('ab')];
      const c1 = (await identify({ userId: uA, anonymousId: aA })).body.serviceCustomerId;
      const c2 = (await identify({ userId: uB, anonymousId: aB })).body.serviceCustomerId;
      const conflict = await identify({ userId: uA, anonymousId: aB });
      expect(conflict.status).toBe(200);
      expect(conflict.body.mergePending).toBe(true);

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
      // No customer is known by the user id: none of the refused calls linked it.
      const found = await t.http.get(`/admin/v1/projects/${p.projectId}/customers?env=sandbox&q=${userId}`).set(operatorAuth());
      expect(found.status).toBe(200);
      expect(found.body.data).toEqual([]);
      const bad = await identify({ userId: uid(), anonymousId: aid(), email: 'a\u0000@example.com' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_param_value');
      const badForget = await forget({ customerId: 'cdcust_\u0000' });
      expect(badForget.status).toBe(400);
      expect(badForget.body.error.code).toBe('invalid_param_value');
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
