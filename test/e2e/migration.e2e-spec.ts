import { ErasureWorker } from '#identity';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

describe('bulk user migration (POST /v1/migration/users)', () => {
  const h = cardWebhookHarness();
  const { now, subscription, event, send } = h;
  let t: TestApp;
  let fx: ProjectFixture;

  beforeAll(async () => {
    ({ t, fx } = h);
    // A card purchase of prod_pro grants 'pro' alone here.
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
  });

  const migrate = (body: unknown, key = fx.keys.skTest) =>
    t.http
      .post('/v1/migration/users')
      .set(keyHeaders(fx, key))
      .send(body as object);

  /** A card subscription event signed like the processor does, through the real webhook. */
  async function cardSubscription(customer: string, status: string, periodEnd = now() + 30 * 86400) {
    const res = await send(event('customer.subscription.updated', subscription({ customer, status, periodEnd })));
    expect(res.status).toBe(200);
    expect(res.body.decision).toBe('applied');
    return res.body.serviceCustomerId as string;
  }

  const customerOf = async (type: string, value: string, projectId = fx.projectId, env = 'sandbox'): Promise<string | null> => {
    const rows = await t.dataSource.query(`SELECT customer_id FROM customer_aliases WHERE project_id = $1 AND env = $2 AND type = $3 AND value = $4`, [
      projectId,
      env,
      type,
      value,
    ]);
    return rows[0]?.customer_id ?? null;
  };
  const activeKeys = async (customerId: string, key = fx.keys.skTest): Promise<string[]> => {
    const res = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, key));
    expect(res.status).toBe(200);
    return res.body.data
      .filter((e: any) => e.isActive)
      .map((e: any) => e.key)
      .sort();
  };
  const migrationAudits = async (customerId: string) =>
    t.dataSource.query(
      `SELECT event_id, reason, details FROM audit_entries WHERE project_id = $1 AND customer_id = $2 AND event_type = 'entitlement.granted_by_migration'`,
      [fx.projectId, customerId],
    );
  const projectCounts = async (projectId = fx.projectId) => {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM customers WHERE project_id = $1) AS customers,
              (SELECT count(*)::int FROM customer_aliases WHERE project_id = $1) AS aliases,
              (SELECT count(*)::int FROM entitlements WHERE project_id = $1 AND rail = 'manual') AS grants,
              (SELECT count(*)::int FROM audit_entries WHERE project_id = $1 AND event_type = 'entitlement.granted_by_migration') AS audits`,
      [projectId],
    );
    return row as { customers: number; aliases: number; grants: number; audits: number };
  };

  describe('request validation', () => {
    it('a publishable key is 401 invalid_api_key; no key is 401', async () => {
      expectError(await migrate({ users: [{ developerUserId: 'u1' }] }, fx.keys.pubTest), 401, 'invalid_api_key');
      const res = await t.http.post('/v1/migration/users').send({ users: [{ developerUserId: 'u1' }] });
      expect(res.status).toBe(401);
    });

    it('users missing or empty: 400 missing_required_param; not an array or over 1,000 rows: 400 invalid_param_value', async () => {
      expectError(await migrate({}), 400, 'missing_required_param');
      expectError(await migrate({ users: null }), 400, 'missing_required_param');
      expectError(await migrate({ users: [] }), 400, 'missing_required_param');
      expectError(await migrate({ users: 'u1' }), 400, 'invalid_param_value');
      expectError(await migrate({ users: { developerUserId: 'u1' } }), 400, 'invalid_param_value');
      const rows = Array.from({ length: 1001 }, (_, i) => ({ developerUserId: `over_${i}` }));
      expectError(await migrate({ users: rows }), 400, 'invalid_param_value');
      // Nothing of the refused requests was written.
      expect(await customerOf('developer', 'over_0')).toBeNull();
    });
    it('text PostgreSQL cannot store (an unpaired surrogate, NUL) in any row: 400 invalid_param_value naming the field, nothing written', async () => {
      const rows = (bad: Record<string, unknown>) => [
        { developerUserId: 'unstorable_0' },
        { developerUserId: 'unstorable_1' },
        { developerUserId: 'unstorable_2' },
        { developerUserId: 'unstorable_3', ...bad },
      ];
      const cases: [Record<string, unknown>, string][] = [
        [{ email: 'a\ud800@example.com' }, 'users[3].email'],
        [{ displayName: 'x\udfff' }, 'users[3].displayName'],
        [{ cardCustomerId: 'cus_\ud83d' }, 'users[3].cardCustomerId'],
        [{ traits: { plan: 'pro\ud800' } }, 'users[3].traits.plan'],
        [{ traits: { plan: 'a\u0000' } }, 'users[3].traits.plan'],
      ];
      for (const [bad, field] of cases) {
        const res = await migrate({ users: rows(bad) });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toBe(`${field}: must not contain NUL characters or unpaired surrogates`);
      }
      expect(await customerOf('developer', 'unstorable_0')).toBeNull();
    });
  });

  describe('rows', () => {
    it('bad rows land in details.errors with their index and reason; their siblings are applied', async () => {
      const ok1 = uid('ok');
      const ok2 = uid('ok');
      const res = await migrate({
        users: [
          { developerUserId: ok1 },
          { email: 'a@example.com' },
          { developerUserId: 'x'.repeat(257) },
          { developerUserId: 42 },
          { developerUserId: uid('bad'), email: 7 },
          { developerUserId: uid('bad'), displayName: ['x'] },
          { developerUserId: uid('bad'), cardCustomerId: 12 },
          { developerUserId: uid('bad'), traits: 'tall' },
          { developerUserId: uid('bad'), entitlements: { pro: 'yes' } },
          { developerUserId: uid('bad'), entitlements: { 'has space': true } },
          { developerUserId: uid('bad'), iosAppAccountToken: 'not-a-uuid' },
          { developerUserId: 'has space' },
          'not an object',
          { developerUserId: ok1 },
          { developerUserId: ok2, email: '', cardCustomerId: null },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'migration_result', env: 'sandbox', totalRows: 15, created: 2, matched: 0, conflicts: 0, errors: 13 });
      expect(res.body.details.errors.map((e: any) => [e.rowIndex, e.reason])).toEqual([
        [1, 'developerUserId_required'],
        [2, 'developerUserId_too_long'],
        [3, 'developerUserId_invalid_type'],
        [4, 'email_invalid_type'],
        [5, 'displayName_invalid_type'],
        [6, 'cardCustomerId_invalid_type'],
        [7, 'traits_invalid_type'],
        [8, 'entitlements_invalid_type'],
        [9, 'entitlements_invalid_key'],
        [10, 'iosAppAccountToken_invalid_value'],
        [11, 'developerUserId_invalid_value'],
        [12, 'row_invalid_type'],
        [13, 'developerUserId_duplicate'],
      ]);
      expect(res.body.details.errors[1].developerUserId).toBe('x'.repeat(257));
      expect(res.body.details.errors[0].developerUserId).toBeNull();
      expect(typeof res.body.processedAt).toBe('number');
      expect(Math.abs(res.body.processedAt - t.clock.nowMs())).toBeLessThan(60_000);
      expect(await customerOf('developer', ok1)).toMatch(/^cdcust_/);
      expect(await customerOf('developer', ok2)).toMatch(/^cdcust_/);
    });

    it('created vs matched: a rail id the rails already saw is linked to its customer; email, displayName and traits are stored', async () => {
      const cus = uid('cus');
      const railCustomer = await cardSubscription(cus, 'canceled');
      const matchedUser = uid('m');
      const createdUser = uid('c');
      const token = '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a'.replace('6f1c1b8e', Math.random().toString(16).slice(2, 10).padEnd(8, '0'));
      const res = await migrate({
        users: [
          { developerUserId: matchedUser, cardCustomerId: cus, email: 'm@example.com', displayName: 'Matt', traits: { plan: 'gold', bad: { nested: 1 } } },
          {
            developerUserId: createdUser,
            iosStoreOriginalTransactionId: uid('otx'),
            iosAppAccountToken: token.toUpperCase(),
            androidPurchaseToken: uid('tok'),
            androidObfuscatedAccountId: uid('obf'),
          },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ matched: 1, created: 1, conflicts: 0, errors: 0, totalRows: 2 });
      expect(await customerOf('developer', matchedUser)).toBe(railCustomer);
      const created = await customerOf('developer', createdUser);
      expect(created).not.toBe(railCustomer);
      for (const type of ['ios_original_transaction_id', 'android_purchase_token', 'android_obfuscated_account_id']) {
        const [row] = await t.dataSource.query(`SELECT count(*)::int AS n FROM customer_aliases WHERE project_id = $1 AND customer_id = $2 AND type = $3`, [
          fx.projectId,
          created,
          type,
        ]);
        expect(row.n).toBe(1);
      }
      expect(await customerOf('ios_app_account_token', token)).toBe(created);
      const [profile] = await t.dataSource.query(`SELECT email, traits FROM customers WHERE id = $1`, [railCustomer]);
      expect(profile).toEqual({ email: 'm@example.com', traits: { plan: 'gold' } });
      const [migrated] = await t.dataSource.query(`SELECT display_name, customer_id FROM migrated_users WHERE project_id = $1 AND developer_user_id = $2`, [
        fx.projectId,
        matchedUser,
      ]);
      expect(migrated).toEqual({ display_name: 'Matt', customer_id: railCustomer });
    });

    it('email is never used to merge: two users with one email stay two customers', async () => {
      const a = uid('e');
      const b = uid('e');
      const res = await migrate({
        users: [
          { developerUserId: a, email: 'same@example.com' },
          { developerUserId: b, email: 'same@example.com' },
        ],
      });
      expect(res.body).toMatchObject({ created: 2 });
      expect(await customerOf('developer', a)).not.toBe(await customerOf('developer', b));
    });

    it('traits follow identify: merged per key into what is stored', async () => {
      const user = uid('tr');
      await migrate({ users: [{ developerUserId: user, traits: { a: 1, b: 'x' } }] });
      const res = await migrate({ users: [{ developerUserId: user, traits: { b: 'y', c: true, d: [1] } }] });
      expect(res.body).toMatchObject({ created: 0, matched: 0, details: { existing: 1 } });
      const [row] = await t.dataSource.query(`SELECT traits FROM customers WHERE id = $1`, [await customerOf('developer', user)]);
      expect(row.traits).toEqual({ a: 1, b: 'y', c: true });
    });
  });

  describe('conflicts (never merged)', () => {
    it('rail ids of different customers, a rail id of another user, a user whose customer differs from the rail customer', async () => {
      const cusA = uid('cus');
      const cusB = uid('cus');
      const customerA = await cardSubscription(cusA, 'canceled');
      const otherUser = uid('o');
      const tokenOfOther = uid('tok');
      await migrate({ users: [{ developerUserId: otherUser, androidPurchaseToken: tokenOfOther }] });
      const customerOther = await customerOf('developer', otherUser);
      const existingUser = uid('x');
      await migrate({ users: [{ developerUserId: existingUser }] });
      const existingCustomer = await customerOf('developer', existingUser);

      const split = uid('s');
      const thief = uid('t');
      const before = await projectCounts();
      const res = await migrate({
        users: [
          { developerUserId: split, cardCustomerId: cusA, androidPurchaseToken: tokenOfOther, entitlements: { pro: true } },
          { developerUserId: thief, androidPurchaseToken: tokenOfOther },
          { developerUserId: existingUser, cardCustomerId: cusA },
          { developerUserId: uid('fine'), cardCustomerId: cusB },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ conflicts: 3, created: 1, matched: 0, entitlementsGranted: 0 });
      expect(res.body.details.conflicts).toEqual([
        {
          developerUserId: split,
          railResolutions: { card_payments: customerA, android_store: customerOther },
          reason: 'rail_ids_resolve_to_different_customers',
        },
        { developerUserId: thief, railResolutions: { android_store: customerOther }, reason: 'rail_ids_belong_to_another_user' },
        {
          developerUserId: existingUser,
          railResolutions: { card_payments: customerA },
          reason: 'rail_ids_belong_to_another_customer',
          developerCustomerId: existingCustomer,
        },
      ]);
      // Nothing moved: the conflicting rows created or linked nothing.
      expect(await customerOf('developer', split)).toBeNull();
      expect(await customerOf('developer', thief)).toBeNull();
      expect(await customerOf('card_customer_id', cusA)).toBe(customerA);
      const after = await projectCounts();
      expect(after.customers - before.customers).toBe(1);
    });

    it('within one request, a later row sees the rail ids an earlier row linked (in order)', async () => {
      const cus = uid('cus');
      const first = uid('f');
      const second = uid('s');
      const res = await migrate({
        users: [
          { developerUserId: first, cardCustomerId: cus },
          { developerUserId: second, cardCustomerId: cus },
        ],
      });
      expect(res.body).toMatchObject({ created: 1, conflicts: 1 });
      expect(res.body.details.conflicts[0]).toMatchObject({ developerUserId: second, reason: 'rail_ids_belong_to_another_user' });
      expect(await customerOf('card_customer_id', cus)).toBe(await customerOf('developer', first));
    });
  });

  describe('the gate (subscription state written through card-payment notifications)', () => {
    it('live subscription: skipped rail-backed; lapsed: skipped lapsed; rail id with no state yet: undetermined; no rail: lifetime grant with one audit entry', async () => {
      const cusLive = uid('cus');
      const cusLapsed = uid('cus');
      const cusPastEnd = uid('cus');
      const cusUnseen = uid('cus');
      const liveCustomer = await cardSubscription(cusLive, 'active');
      await cardSubscription(cusLapsed, 'canceled');
      await cardSubscription(cusPastEnd, 'active', now() - 3600);
      const users = {
        live: uid('live'),
        lapsed: uid('lapsed'),
        pastEnd: uid('past'),
        unseen: uid('unseen'),
        plain: uid('plain'),
      };
      const res = await migrate({
        users: [
          { developerUserId: users.live, cardCustomerId: cusLive, entitlements: { pro: true, legacy_gold: true } },
          { developerUserId: users.lapsed, cardCustomerId: cusLapsed, entitlements: { pro: true } },
          { developerUserId: users.pastEnd, cardCustomerId: cusPastEnd, entitlements: { pro: true } },
          { developerUserId: users.unseen, cardCustomerId: cusUnseen, entitlements: { pro: true } },
          {
            developerUserId: users.plain,
            iosAppAccountToken: '0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3',
            entitlements: { pro: true, legacy_gold: true, off: false },
          },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        matched: 3,
        created: 2,
        entitlementsSkippedRailBacked: 2,
        entitlementsSkippedLapsed: 2,
        entitlementsUndetermined: 1,
        entitlementsGranted: 2,
      });
      expect(await activeKeys(liveCustomer)).toEqual(['pro']); // the rail's, no manual grant beside it
      const plainCustomer = (await customerOf('developer', users.plain)) as string;
      expect(await activeKeys(plainCustomer)).toEqual(['legacy_gold', 'pro']);
      expect(await activeKeys((await customerOf('developer', users.unseen)) as string)).toEqual([]);
      expect(await activeKeys((await customerOf('developer', users.lapsed)) as string)).toEqual([]);

      const entitlements = await t.http.get(`/v1/server/customers/${plainCustomer}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
      const pro = entitlements.body.data.find((e: any) => e.key === 'pro');
      expect(pro).toMatchObject({ isActive: true, validUntil: null, source: { rail: 'manual' } });
      const audits = await migrationAudits(plainCustomer);
      expect(audits).toHaveLength(2);
      expect(audits[0].reason).toMatch(/migration/i);
      const read = await t.http.get(`/v1/server/audit/${audits[0].event_id}`).set(keyHeaders(fx, fx.keys.skTest));
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ rail: 'manual', customerId: plainCustomer, decision: 'applied', eventType: 'entitlement.granted_by_migration' });

      // The unseen card customer's subscription arrives; a re-run now reads it (rail-backed), still no grant.
      await cardSubscription(cusUnseen, 'active');
      const rerun = await migrate({ users: [{ developerUserId: users.unseen, cardCustomerId: cusUnseen, entitlements: { pro: true } }] });
      expect(rerun.body).toMatchObject({ matched: 1, entitlementsSkippedRailBacked: 1, entitlementsUndetermined: 0, entitlementsGranted: 0 });
    });

    it('asserted keys are registered in the catalogue (registeredBy migration), also for rows that were not granted', async () => {
      const key = `mig_${Math.random().toString(36).slice(2, 10)}`;
      const res = await migrate({ users: [{ developerUserId: uid('k'), cardCustomerId: uid('cus'), entitlements: { [key]: true, [`${key}_off`]: false } }] });
      expect(res.body).toMatchObject({ entitlementKeysRegistered: 1, entitlementsUndetermined: 1, entitlementsGranted: 0 });
      const keys = await t.http.get(`/admin/v1/projects/${fx.projectId}/entitlement-keys`).set(operatorAuth());
      expect(keys.status).toBe(200);
      expect(keys.body.data.find((k: any) => k.key === key)).toMatchObject({ registeredBy: 'migration' });
      expect(keys.body.data.find((k: any) => k.key === `${key}_off`)).toBeUndefined();
      // Already registered: a second request registers nothing new.
      const again = await migrate({ users: [{ developerUserId: uid('k'), entitlements: { [key]: true } }] });
      expect(again.body).toMatchObject({ entitlementKeysRegistered: 0, entitlementsGranted: 1 });
    });
  });

  describe('convergence', () => {
    const batch = (prefix: string, from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        developerUserId: `${prefix}_${from + i}`,
        email: `${prefix}_${from + i}@example.com`,
        ...((from + i) % 3 === 0 ? { cardCustomerId: `cus_${prefix}_${from + i}` } : {}),
        entitlements: { lifetime_pro: true },
      }));

    it('re-running the same migration and an overlapping one adds no customer, link, grant or audit entry twice', async () => {
      const prefix = uid('conv');
      const first = await migrate({ users: batch(prefix, 0, 30) });
      expect(first.body).toMatchObject({ created: 30, entitlementsGranted: 20, entitlementsUndetermined: 10 });
      const after1 = await projectCounts();
      const second = await migrate({ users: batch(prefix, 0, 30) });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        created: 0,
        matched: 10,
        conflicts: 0,
        entitlementsGranted: 0,
        entitlementsUndetermined: 10,
        details: { existing: 20, entitlementsAlreadyGranted: 20 },
      });
      expect(await projectCounts()).toEqual(after1);
      const overlap = await migrate({ users: batch(prefix, 15, 45) });
      expect(overlap.body).toMatchObject({ created: 15, entitlementsGranted: 10 });
      const after3 = await projectCounts();
      expect(after3.customers - after1.customers).toBe(15);
      expect(after3.grants - after1.grants).toBe(10);
      expect(after3.audits - after1.audits).toBe(10);
    });

    it('two concurrent migrations of overlapping rows: no 500, no duplicates, one customer per user', async () => {
      const prefix = uid('race');
      const before = await projectCounts();
      const [a, b] = await Promise.all([migrate({ users: batch(prefix, 0, 200) }), migrate({ users: batch(prefix, 100, 300) })]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.created + b.body.created).toBe(300);
      const after = await projectCounts();
      expect(after.customers - before.customers).toBe(300);
      expect(after.grants - before.grants).toBe(200);
      expect(after.audits - before.audits).toBe(200);
      const [dups] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM (SELECT customer_id FROM customer_aliases WHERE project_id = $1 AND type = 'developer' AND value LIKE $2 GROUP BY customer_id HAVING count(*) > 1) d`,
        [fx.projectId, `${prefix}_%`],
      );
      expect(dups.n).toBe(0);
      const [users] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM customer_aliases WHERE project_id = $1 AND type = 'developer' AND value LIKE $2`,
        [fx.projectId, `${prefix}_%`],
      );
      expect(users.n).toBe(300);
    });
  });

  it('a migration racing the card webhook for the same card customer ends on one customer, whichever wins', async () => {
    for (let round = 0; round < 3; round++) {
      const cus = uid('cus');
      const user = uid('racer');
      const [res, railCustomer] = await Promise.all([
        migrate({ users: [{ developerUserId: user, cardCustomerId: cus, entitlements: { pro: true } }] }),
        cardSubscription(cus, 'active'),
      ]);
      expect(res.status).toBe(200);
      expect(res.body.matched + res.body.created).toBe(1);
      const customer = await customerOf('developer', user);
      expect(customer).toBe(railCustomer);
      expect(await customerOf('card_customer_id', cus)).toBe(customer);
      // Either the rail was there first (rail-backed) or not yet (undetermined): never a manual grant.
      expect(res.body.entitlementsGranted).toBe(0);
      expect(await migrationAudits(customer as string)).toHaveLength(0);
    }
  });

  it('environment isolation: a production key migrates into production only', async () => {
    const user = uid('env');
    const cus = uid('cus');
    const sandbox = await migrate({ users: [{ developerUserId: user, cardCustomerId: cus, entitlements: { pro: true } }] });
    expect(sandbox.body).toMatchObject({ env: 'sandbox', created: 1 });
    const live = await migrate({ users: [{ developerUserId: user, cardCustomerId: cus, entitlements: { pro: true } }] }, fx.keys.skLive);
    expect(live.body).toMatchObject({ env: 'production', created: 1, matched: 0 });
    const sandboxCustomer = await customerOf('developer', user, fx.projectId, 'sandbox');
    const liveCustomer = await customerOf('developer', user, fx.projectId, 'production');
    expect(liveCustomer).not.toBe(sandboxCustomer);
    expect(await customerOf('card_customer_id', cus, fx.projectId, 'production')).toBe(liveCustomer);
    // Another project's key sees neither.
    const other = await createProjectWithApp(t);
    const res = await t.http
      .post('/v1/migration/users')
      .set(keyHeaders(other, other.keys.skTest))
      .send({ users: [{ developerUserId: user, cardCustomerId: cus }] });
    expect(res.body).toMatchObject({ created: 1, matched: 0, conflicts: 0 });
    expect(await customerOf('developer', user, other.projectId)).not.toBe(sandboxCustomer);
  });

  it('erasure: a forgotten customer loses its migrated display name; migrating the user again makes a new customer with its ids', async () => {
    const user = uid('forget');
    const cus = uid('cus');
    await migrate({ users: [{ developerUserId: user, cardCustomerId: cus, displayName: 'Erin', email: 'erin@example.com' }] });
    const customer = (await customerOf('developer', user)) as string;
    const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(fx, fx.keys.skTest)).send({ customerId: customer });
    expect(forget.status).toBe(200);
    await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 86_400 });
    await t.app.get(ErasureWorker).runOnce({ projectId: fx.projectId });
    expect(await t.dataSource.query(`SELECT 1 FROM migrated_users WHERE project_id = $1 AND developer_user_id = $2`, [fx.projectId, user])).toEqual([]);
    // The forgotten customer's nodes read as unknown (its rail alias is released, as the rails do).
    const again = await migrate({ users: [{ developerUserId: user, cardCustomerId: cus, displayName: 'Erin' }] });
    expect(again.body).toMatchObject({ created: 1, matched: 0, conflicts: 0 });
    const fresh = await customerOf('developer', user);
    expect(fresh).not.toBe(customer);
    expect(await customerOf('card_customer_id', cus)).toBe(fresh);
  });
});
