import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { createIosRailProject } from '../support/ios-rail.js';
import { type StoreChain, createStoreChain, notificationPayload, renewalInfoPayload, signStoreJws, transactionPayload } from '../support/store-signing.js';

/**
 * Seeded fuzzing of signed lifecycle data: App Store notifications whose transaction and renewal
 * info carry odd, missing, out-of-range or wrongly typed fields, and card events whose
 * subscription, invoice, charge and dispute objects do. They are authentic (signed with the
 * trusted chain, or the processor's secret), so they reach the lifecycle. Invariants: never a
 * 5xx; a 400 is `invalid_param_value` with nothing stored; a type or subtype the service cannot
 * place is `200 no_op` with the type recorded in the audit entry.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_207);
const ROUNDS = 80;
const BUNDLE = 'com.example.fuzz.lifecycle';

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values of the wrong kind or out of range for any field. */
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  '12',
  -1,
  0,
  1.5,
  -1e13,
  2e12,
  1e308,
  -(2 ** 63),
  2 ** 63,
  Number.MAX_SAFE_INTEGER,
  true,
  [],
  {},
  { nested: { deep: [1, 2] } },
];

const IOS_TYPES: [string, (string | undefined)[]][] = [
  ['SUBSCRIBED', ['INITIAL_BUY', 'RESUBSCRIBE', undefined]],
  ['DID_RENEW', [undefined, 'BILLING_RECOVERY']],
  ['DID_CHANGE_RENEWAL_STATUS', ['AUTO_RENEW_DISABLED', 'AUTO_RENEW_ENABLED']],
  ['DID_FAIL_TO_RENEW', ['GRACE_PERIOD', undefined]],
  ['GRACE_PERIOD_EXPIRED', [undefined]],
  ['EXPIRED', ['VOLUNTARY', 'BILLING_RETRY', 'PRICE_INCREASE', 'PRODUCT_NOT_FOR_SALE']],
  ['REFUND', [undefined]],
  ['REVOKE', [undefined]],
  ['REFUND_REVERSED', [undefined]],
  ['RENEWAL_EXTENDED', [undefined]],
  ['DID_CHANGE_RENEWAL_PREF', ['UPGRADE', 'DOWNGRADE', undefined]],
  ['OFFER_REDEEMED', ['INITIAL_BUY', 'UPGRADE', undefined]],
  ['PRICE_INCREASE', ['PENDING', 'ACCEPTED']],
  ['ONE_TIME_CHARGE', [undefined]],
];

const TRANSACTION_FIELDS = [
  'price',
  'currency',
  'expiresDate',
  'purchaseDate',
  'originalPurchaseDate',
  'offerType',
  'offerIdentifier',
  'offerDiscountType',
  'type',
  'inAppOwnershipType',
  'revocationDate',
  'revocationType',
  'revocationPercentage',
];
const RENEWAL_FIELDS = [
  'autoRenewStatus',
  'autoRenewProductId',
  'gracePeriodExpiresDate',
  'isInBillingRetryPeriod',
  'renewalPrice',
  'currency',
  'renewalDate',
  'expirationIntent',
  'offerType',
  'priceIncreaseStatus',
];

describe('fuzz: signed lifecycle data (App Store notifications, card events)', () => {
  const h = cardWebhookHarness();
  let chain: StoreChain;
  let ios: ProjectFixture;

  beforeAll(async () => {
    chain = createStoreChain();
    ios = await createIosRailProject(h.t, BUNDLE, chain.rootPem);
  });

  /** Rows a rejected request must not have written, of one project. */
  const stored = async (projectId: string) =>
    (
      await h.t.dataSource.query(
        `SELECT (SELECT count(*)::int FROM rail_notifications WHERE project_id = $1) AS notifications,
                (SELECT count(*)::int FROM audit_entries WHERE project_id = $1) AS entries,
                (SELECT count(*)::int FROM rail_subscriptions WHERE project_id = $1) AS subscriptions,
                (SELECT count(*)::int FROM revenue_subscriptions WHERE project_id = $1) AS revenue,
                (SELECT count(*)::int FROM revenue_payments WHERE project_id = $1) AS payments,
                (SELECT count(*)::int FROM revenue_refunds WHERE project_id = $1) AS returns`,
        [projectId],
      )
    )[0];
  const audit = async (fx: ProjectFixture, eventId: string) =>
    (await h.t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(fx, fx.keys.skTest))).body.data;

  /** Checks the invariants of one answer; returns the failures. */
  async function check(label: string, res: { status: number; body: any }, before: Record<string, number>, projectId: string): Promise<string[]> {
    const failures: string[] = [];
    if (res.status >= 500) failures.push(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    if (res.status === 400) {
      const code = res.body?.error?.code;
      // The official library checks a JWS payload's field types before its signature: a wrongly
      // typed field cannot be told authentic, and is refused as a signature that does not verify.
      const untyped = code === 'invalid_signature' && /not a signed payload of the expected type/.test(res.body?.error?.message ?? '');
      if (code !== 'invalid_param_value' && !untyped) failures.push(`${label}: 400 ${code} ${res.body?.error?.message}`);
      const after = await stored(projectId);
      if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${label}: rejected but stored ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
    } else if (res.status === 200) {
      if (!['applied', 'no_op', 'rejected'].includes(res.body?.decision)) failures.push(`${label}: 200 with decision ${res.body?.decision}`);
    } else if (res.status !== 404) {
      failures.push(`${label}: unexpected ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    return failures;
  }

  describe('App Store Server Notifications V2', () => {
    const nowMs = () => h.t.clock.nowMs();
    const transaction = (fields: Record<string, unknown> = {}) =>
      transactionPayload({
        bundleId: BUNDLE,
        productId: 'pro.monthly',
        signedDate: nowMs(),
        expiresDate: nowMs() + 30 * 86_400_000,
        price: 9990,
        currency: 'USD',
        ...fields,
      });
    const notify = (o: { type: string; subtype?: string; tx?: Record<string, unknown>; renewal?: Record<string, unknown> | null }) => {
      const tx = o.tx ?? transaction();
      const renewal =
        o.renewal === null
          ? undefined
          : {
              ...renewalInfoPayload({
                originalTransactionId: tx.originalTransactionId as string,
                productId: 'pro.monthly',
                environment: 'Sandbox',
                signedDate: nowMs(),
              }),
              ...o.renewal,
            };
      const payload = notificationPayload({
        notificationType: o.type,
        subtype: o.subtype,
        signedDate: nowMs(),
        bundleId: BUNDLE,
        environment: 'Sandbox',
        signedTransactionInfo: signStoreJws(chain, { ...tx, environment: 'Sandbox' }),
        ...(renewal ? { signedRenewalInfo: signStoreJws(chain, renewal) } : {}),
      });
      return h.t.http.post(`/v1/webhooks/ios_store/${ios.projectId}`).send({ signedPayload: signStoreJws(chain, payload) });
    };

    it('odd, missing, out-of-range and wrongly typed fields: never a 5xx; a 400 names the field and stores nothing', async () => {
      const random = prng(SEED);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
      const failures: string[] = [];
      const statuses: Record<number, number> = {};
      // Each round: a subscription started cleanly, then a notification of a random type with odd fields.
      for (let i = 0; i < ROUNDS && failures.length < 10; i++) {
        const base = transaction();
        if (i % 4 === 0) await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx: base });
        const [type, subtypes] = pick(IOS_TYPES);
        const subtype = pick(subtypes);
        const tx: Record<string, unknown> = { ...base, transactionId: uid('2000') };
        const renewal: Record<string, unknown> = {};
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
          const field = pick(TRANSACTION_FIELDS);
          const value = pick(ODD_VALUES);
          if (value === undefined) delete tx[field];
          else tx[field] = value;
        }
        for (let n = Math.floor(random() * 3); n > 0; n--) renewal[pick(RENEWAL_FIELDS)] = pick(ODD_VALUES);
        const before = await stored(ios.projectId);
        const res = await notify({ type, subtype, tx, renewal });
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        failures.push(...(await check(`#${i} ${type}/${subtype ?? '-'} ${JSON.stringify({ tx, renewal }).slice(0, 300)}`, res, before, ios.projectId)));
      }
      expect(failures).toEqual([]);
      // Both ways were reached: some rejected as out of range, some applied or placed nowhere.
      expect(statuses[400]).toBeGreaterThan(0);
      expect(statuses[200]).toBeGreaterThan(0);
    }, 240_000);

    it.each([
      ['signedTransactionInfo.price', { tx: { price: 2e12 } }],
      ['signedTransactionInfo.price', { tx: { price: -2e12 } }],
      ['signedTransactionInfo.price', { tx: { price: 1e308 } }],
      ['signedTransactionInfo.expiresDate', { tx: { expiresDate: 1e308 } }],
      ['signedRenewalInfo.renewalPrice', { type: 'PRICE_INCREASE', subtype: 'PENDING', renewal: { renewalPrice: 2e12, currency: 'USD' } }],
      ['signedRenewalInfo.renewalPrice', { type: 'PRICE_INCREASE', subtype: 'ACCEPTED', renewal: { renewalPrice: -2e12, currency: 'USD' } }],
      ['signedRenewalInfo.gracePeriodExpiresDate', { type: 'DID_FAIL_TO_RENEW', subtype: 'GRACE_PERIOD', renewal: { gracePeriodExpiresDate: 2 ** 63 } }],
    ])('an amount or time out of range: 400 invalid_param_value naming %s, nothing stored', async (field, o: any) => {
      await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY' });
      const before = await stored(ios.projectId);
      const res = await notify({ type: o.type ?? 'DID_RENEW', subtype: o.subtype, tx: transaction(o.tx ?? {}), renewal: o.renewal });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_param_value');
      expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
      expect(await stored(ios.projectId)).toEqual(before);
    });

    it.each([
      ['SUBSCRIBED', 'SOMETHING_NEW'],
      ['DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_MAYBE'],
      ['DID_FAIL_TO_RENEW', 'LATER'],
      ['EXPIRED', 'SOLAR_FLARE'],
      ['PRICE_INCREASE', 'POSTPONED'],
      ['DID_CHANGE_RENEWAL_PREF', 'SIDEGRADE'],
      ['RENEWAL_EXTENSION', 'FAILURE'],
      ['A_FUTURE_NOTIFICATION', undefined],
      ['REFUND_DECLINED', undefined],
    ])('%s/%s cannot be placed: 200 no_op, the type recorded in the audit entry, access unchanged', async (type, subtype) => {
      const tx = transaction();
      const first = await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx });
      expect(first.body.decision).toBe('applied');
      const subscriptions = () => h.t.http.get(`/v1/server/customers/${first.body.serviceCustomerId}/subscriptions`).set(keyHeaders(ios, ios.keys.skTest));
      const was = (await subscriptions()).body.data;
      const res = await notify({ type, subtype, tx: { ...tx, transactionId: uid('2000') } });
      expect(res.status).toBe(200);
      expect(res.body.decision).toBe('no_op');
      const entry = await audit(ios, res.body.auditEventId);
      expect(entry).toEqual(expect.objectContaining({ eventType: type, decision: 'no_op' }));
      const [{ details }] = await h.t.dataSource.query(`SELECT details FROM audit_entries WHERE event_id = $1`, [res.body.auditEventId]);
      if (subtype) expect(details.subtype).toBe(subtype);
      expect((await subscriptions()).body.data).toEqual(was.map((s: object) => ({ ...s, isActive: true })));
    });

    it('unknown offer types and discounts, a missing expiresDate and an unknown ownership: placed without them, never an error', async () => {
      const odd = await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx: transaction({ offerType: 42, offerDiscountType: 'HALF_OFF_FOREVER' }) });
      expect(odd.status).toBe(200);
      const [object] = (await h.t.http.get(`/v1/server/customers/${odd.body.serviceCustomerId}/subscriptions`).set(keyHeaders(ios, ios.keys.skTest))).body.data;
      expect(object).toEqual(expect.objectContaining({ offer: null, periodType: 'normal' }));
      const noEnd = transaction();
      delete noEnd.expiresDate;
      expect((await notify({ type: 'DID_RENEW', tx: noEnd })).status).toBe(200);
      expect((await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx: transaction({ inAppOwnershipType: 'BORROWED' }) })).status).toBe(200);
    });
  });

  describe('card events', () => {
    const { now, subscription, event, send } = h;

    /** A subscription object with odd values in some of its fields (top level, items, prices). */
    function oddSubscription(random: () => number, pick: <T>(list: readonly T[]) => T): Record<string, unknown> {
      const sub = subscription() as Record<string, any>;
      const [item] = sub.items.data;
      item.price = { ...item.price, unit_amount: 999, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } };
      item.quantity = 1;
      const targets: [Record<string, any>, string][] = [
        [sub, 'status'],
        [sub, 'trial_end'],
        [sub, 'trial_start'],
        [sub, 'current_period_start'],
        [sub, 'cancel_at_period_end'],
        [sub, 'cancellation_details'],
        [sub, 'pause_collection'],
        [sub, 'schedule'],
        [sub, 'livemode'],
        [sub, 'items'],
        [item, 'current_period_end'],
        [item, 'current_period_start'],
        [item, 'quantity'],
        [item, 'price'],
        [item.price, 'unit_amount'],
        [item.price, 'currency'],
        [item.price, 'recurring'],
      ];
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        const [target, field] = pick(targets);
        const value = pick([...ODD_VALUES, 'trialing', 'past_due', 'unpaid', 'paused', 'incomplete_expired', 'canceled', 'sleeping']);
        if (value === undefined) delete target[field];
        else target[field] = value;
      }
      return sub;
    }

    function oddMoney(random: () => number, pick: <T>(list: readonly T[]) => T, sub: { id: string; customer: string }): [string, Record<string, unknown>] {
      const charge = uid('ch');
      const objects: [string, Record<string, any>][] = [
        ['invoice.paid', { id: uid('in'), object: 'invoice', customer: sub.customer, subscription: sub.id, currency: 'usd', amount_paid: 999, charge }],
        ['invoice.payment_failed', { id: uid('in'), object: 'invoice', customer: sub.customer, subscription: sub.id, currency: 'usd', amount_due: 999 }],
        ['charge.refunded', { id: charge, object: 'charge', customer: sub.customer, amount_refunded: 300, currency: 'usd' }],
        ['charge.dispute.created', { id: uid('dp'), object: 'dispute', amount: 999, currency: 'usd', charge, status: 'needs_response' }],
        ['charge.dispute.closed', { id: uid('dp'), object: 'dispute', amount: 999, currency: 'usd', charge, status: 'won' }],
      ];
      const [type, object] = pick(objects);
      const fields = Object.keys(object).filter((field) => field !== 'object');
      for (let n = 1 + Math.floor(random() * 2); n > 0; n--) {
        const field = pick([...fields, 'parent', 'payment_intent', 'status_transitions']);
        const value = pick(ODD_VALUES);
        if (value === undefined) delete object[field];
        else object[field] = value;
      }
      return [type, object];
    }

    it('odd subscription, invoice, charge and dispute objects: never a 5xx; a 400 stores nothing', async () => {
      const random = prng(SEED + 1);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
      const failures: string[] = [];
      const statuses: Record<number, number> = {};
      for (let i = 0; i < ROUNDS && failures.length < 10; i++) {
        const clean = subscription();
        const created = await send(event('customer.subscription.created', clean));
        expect(created.status).toBe(200);
        const body =
          random() < 0.5
            ? event(pick(['customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.created']), oddSubscription(random, pick))
            : event(...oddMoney(random, pick, clean as { id: string; customer: string }), { created: now() + 1 });
        const before = await stored(h.fx.projectId);
        const res = await send(body);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        failures.push(...(await check(`#${i} ${body.type} ${JSON.stringify(body.data.object).slice(0, 300)}`, res, before, h.fx.projectId)));
      }
      expect(failures).toEqual([]);
      expect(statuses[400]).toBeGreaterThan(0);
      expect(statuses[200]).toBeGreaterThan(0);
    }, 240_000);

    it.each([
      [
        'data.object.amount_paid',
        'invoice.paid',
        (sub: any) => ({ id: uid('in'), object: 'invoice', customer: sub.customer, subscription: sub.id, currency: 'usd', amount_paid: -1e18 }),
      ],
      [
        'data.object.amount_refunded',
        'charge.refunded',
        (sub: any) => ({ id: uid('ch'), object: 'charge', customer: sub.customer, amount_refunded: 1e20, currency: 'usd' }),
      ],
      [
        'data.object.amount',
        'charge.dispute.created',
        () => ({ id: uid('dp'), object: 'dispute', amount: -1e20, currency: 'usd', charge: uid('ch'), status: 'needs_response' }),
      ],
    ])('an amount out of range: 400 invalid_param_value naming %s, nothing stored', async (field, type, make) => {
      const sub = subscription();
      expect((await send(event('customer.subscription.created', sub))).status).toBe(200);
      const before = await stored(h.fx.projectId);
      const res = await send(event(type, make(sub)));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_param_value');
      expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
      expect(await stored(h.fx.projectId)).toEqual(before);
    });

    it('an event type the lifecycle does not read: 200 no_op with the type in the audit entry', async () => {
      const res = await send(event('customer.subscription.teleported', subscription()));
      expect(res.status).toBe(200);
      expect(res.body.decision).toBe('no_op');
      expect(await audit(h.fx, res.body.auditEventId)).toEqual(expect.objectContaining({ eventType: 'customer.subscription.teleported', decision: 'no_op' }));
    });
  });
});
