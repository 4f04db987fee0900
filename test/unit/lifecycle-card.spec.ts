// The card rows of the subscription lifecycle: one case per event row, each named after the row
// it checks, in the processor's object shapes.
import type Stripe from 'stripe';
import { RailFieldError } from '../../libs/rails/src/model/rail-bounds.js';
import {
  type CardChargeObject,
  type CardDisputeObject,
  type CardInvoiceObject,
  type CardLifecycleInput,
  type CardObject,
  type CardSubscriptionObject,
  cardGracePeriodDays,
  deriveCardLifecycle,
} from '../../libs/rails/src/lifecycle/card-lifecycle.js';
import type { LifecycleContext, LifecycleResult } from '../../libs/rails/src/lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';

const DAY = 86_400;
const T0 = 1_800_000_000;
const T1 = T0 + 30 * DAY;
const T2 = T1 + 30 * DAY;

const ctxAt = (seconds: number): LifecycleContext => ({
  nowMs: seconds * 1000,
  railTimeMs: seconds * 1000,
  entitlementKeysOf: (product) => [product === 'prod_pro' ? 'pro' : 'plus'],
});

function sub(
  fields: Partial<CardSubscriptionObject> = {},
  item: { product?: string; start?: number; end?: number; unit_amount?: number; quantity?: number; currency?: string } = {},
): CardSubscriptionObject {
  return {
    object: 'subscription',
    id: 'sub_1',
    customer: 'cus_1',
    status: 'active',
    livemode: true,
    start_date: T0,
    cancel_at_period_end: false,
    items: {
      data: [
        {
          price: { product: item.product ?? 'prod_pro', unit_amount: item.unit_amount ?? 999, currency: item.currency ?? 'usd' },
          quantity: item.quantity ?? 1,
          current_period_start: item.start ?? T0,
          current_period_end: item.end ?? T1,
        },
      ],
    },
    ...fields,
  };
}

function event(eventType: string, object: CardObject, created: number, extra: Partial<CardLifecycleInput> = {}): CardLifecycleInput {
  return { eventId: `evt_${created}`, eventType, created, livemode: true, object, ...extra };
}

function derive(previous: Subscription | null, input: CardLifecycleInput, now = input.created, gracePeriodDays = 0): LifecycleResult {
  return deriveCardLifecycle(previous, input, { gracePeriodDays }, ctxAt(now));
}

const UPDATED = 'customer.subscription.updated';
const active = (): Subscription => derive(null, event('customer.subscription.created', sub(), T0)).subscription!;
const pastDue = (start = T1) => sub({ status: 'past_due' }, { start, end: start + 30 * DAY });
const types = (result: LifecycleResult) => result.events.map((e) => e.type);

const invoice = (fields: Partial<CardInvoiceObject> = {}): CardInvoiceObject => ({
  object: 'invoice',
  id: 'in_2',
  customer: 'cus_1',
  amount_paid: 999,
  currency: 'usd',
  parent: { subscription_details: { subscription: 'sub_1' } },
  payments: { data: [{ payment: { payment_intent: 'pi_2' } }] },
  status_transitions: { paid_at: T1 + 60 },
  lines: { data: [{ period: { start: T1 } }] },
  ...fields,
});

describe('card lifecycle: subscription events', () => {
  it('the processor library’s objects fit the input types', () => {
    const fits: [CardSubscriptionObject, CardInvoiceObject, CardChargeObject, CardDisputeObject] = [] as unknown as [
      Stripe.Subscription,
      Stripe.Invoice,
      Stripe.Charge,
      Stripe.Dispute,
    ];
    expect(fits).toEqual([]);
  });

  it('a new active subscription: the object from the processor’s subscription, money in micros', () => {
    const result = derive(null, event('customer.subscription.created', sub(), T0));
    expect(result.subscription).toMatchObject({
      id: 'sub_1',
      rail: 'card_payments',
      productId: 'prod_pro',
      entitlementKeys: ['pro'],
      state: 'active',
      periodType: 'normal',
      currentPeriodStartsAt: T0,
      currentPeriodEndsAt: T1,
      accessEndsAt: T1,
      price: { amountMicros: 9_990_000, currency: 'USD' },
      storeEnvironment: 'production',
      isActive: true,
    });
    expect(result.events).toEqual([{ type: 'subscription.started', periodType: 'normal', isTrialStart: false }]);
  });

  it('subscription `status: trialing`: `trialing` until `trial_end`, `periodType` `trial`, `price.amountMicros` 0 for the period', () => {
    const result = derive(null, event('customer.subscription.created', sub({ status: 'trialing', trial_end: T0 + 7 * DAY }, { end: T0 + 7 * DAY }), T0));
    expect(result.subscription).toMatchObject({
      state: 'trialing',
      periodType: 'trial',
      accessEndsAt: T0 + 7 * DAY,
      price: { amountMicros: 0, currency: 'USD' },
    });
    expect(result.events).toEqual([{ type: 'subscription.started', periodType: 'trial', isTrialStart: true }]);
  });

  it('`trialing` → `active` (`customer.subscription.updated`): `active`, `isTrialConversion`', () => {
    const trial = derive(
      null,
      event('customer.subscription.created', sub({ status: 'trialing', trial_end: T0 + 7 * DAY }, { end: T0 + 7 * DAY }), T0),
    ).subscription!;
    const result = derive(trial, event(UPDATED, sub({}, { start: T0 + 7 * DAY, end: T1 + 7 * DAY }), T0 + 7 * DAY));
    expect(result.subscription).toMatchObject({ state: 'active', periodType: 'normal', price: { amountMicros: 9_990_000 } });
    expect(result.events).toEqual([{ type: 'subscription.renewed', isTrialConversion: true }]);
  });

  it('a new period paid (`customer.subscription.updated`, period moved): `subscription.renewed`', () => {
    const result = derive(active(), event(UPDATED, sub({}, { start: T1, end: T2 }), T1));
    expect(result.subscription).toMatchObject({ purchasedAt: T1, accessEndsAt: T2 });
    expect(result.events).toEqual([{ type: 'subscription.renewed', isTrialConversion: false }]);
  });

  describe('`status: past_due` (after `invoice.payment_failed`)', () => {
    it('`in_grace_period` until `current_period_start` + the rail’s `gracePeriodDays`; `billingIssueDetectedAt` = the rail time of the first event that showed the problem', () => {
      const failed = derive(active(), event('invoice.payment_failed', invoice({ amount_paid: 0 }), T1 + 60), T1 + 60, 3);
      expect(failed.subscription).toMatchObject({
        state: 'in_grace_period',
        gracePeriodEndsAt: T1 + 3 * DAY,
        accessEndsAt: T1 + 3 * DAY,
        billingIssueDetectedAt: T1 + 60,
      });
      expect(failed.events).toEqual([{ type: 'subscription.billing_issue', gracePeriodEndsAt: T1 + 3 * DAY }]);
      const updated = derive(failed.subscription, event(UPDATED, pastDue(), T1 + 120), T1 + 120, 3);
      expect(updated.subscription).toMatchObject({ state: 'in_grace_period', billingIssueDetectedAt: T1 + 60, isActive: true });
      expect(updated.events).toEqual([]);
    });

    it('then `in_billing_retry` (no access after `current_period_start`)', () => {
      const result = derive(active(), event(UPDATED, pastDue(), T1 + 3 * DAY), T1 + 3 * DAY, 3);
      expect(result.subscription).toMatchObject({ state: 'in_billing_retry', gracePeriodEndsAt: null, accessEndsAt: T1, willRenew: false, isActive: false });
    });

    it.each([
      [undefined, 0],
      [0, 0],
      [30, 30],
    ])('the setting `gracePeriodDays` %s reads as %d', (value, days) => {
      expect(cardGracePeriodDays(value)).toBe(days);
    });

    it.each([-1, 31, 1.5, '3', Number.NaN])('the setting `gracePeriodDays` %s is refused, naming it', (value) => {
      expect(() => cardGracePeriodDays(value)).toThrow('gracePeriodDays: must be an integer between 0 and 30');
    });

    it('with `gracePeriodDays` 0 (the default): `in_billing_retry` at once', () => {
      const result = derive(active(), event(UPDATED, pastDue(), T1 + 60), T1 + 60, 0);
      expect(result.subscription).toMatchObject({ state: 'in_billing_retry', accessEndsAt: T1, billingIssueDetectedAt: T1 + 60, isActive: false });
      expect(result.events).toEqual([{ type: 'subscription.billing_issue', gracePeriodEndsAt: null }]);
    });
  });

  it.each([
    ['`invoice.paid` for a subscription in billing trouble', (trouble: Subscription) => derive(trouble, event('invoice.paid', invoice(), T1 + DAY))],
    ['`status` back to `active`', (trouble: Subscription) => derive(trouble, event(UPDATED, sub({}, { start: T1, end: T2 }), T1 + DAY))],
  ])('%s: `active`, `billingIssueDetectedAt` cleared (`subscription.recovered`)', (_row, recover) => {
    const trouble = derive(active(), event(UPDATED, pastDue(), T1 + 60)).subscription!;
    const result = recover(trouble);
    expect(result.subscription).toMatchObject({ state: 'active', billingIssueDetectedAt: null, accessEndsAt: T2, isActive: true, willRenew: true });
    expect(result.events).toEqual([{ type: 'subscription.recovered', billingIssueDetectedAt: T1 + 60 }]);
  });

  it.each([
    ['unpaid', UPDATED],
    ['incomplete_expired', UPDATED],
    ['incomplete_expired', 'customer.subscription.deleted'],
  ])('`%s` (%s): `expired` (`billing_error`)', (status, type) => {
    const result = derive(active(), event(type, sub({ status }, { start: T1, end: T2 }), T1 + 10 * DAY));
    expect(result.subscription).toMatchObject({ state: 'expired', expirationReason: 'billing_error', isActive: false });
    expect(types(result)).toContain('subscription.expired');
  });

  it.each([
    ['cancellation_requested', 'unsubscribe'],
    ['payment_failed', 'billing_error'],
    ['payment_disputed', 'unknown'],
  ])(
    '`cancel_at_period_end` true / false: `willRenew` false / true, `unsubscribeDetectedAt` set / cleared; `cancellation_details.reason` %s → `expirationReason` %s when it ends',
    (reason, expirationReason) => {
      const canceling = derive(
        active(),
        event(UPDATED, sub({ cancel_at_period_end: true, canceled_at: T0 + DAY, cancellation_details: { reason } }), T0 + DAY),
      );
      expect(canceling.subscription).toMatchObject({ state: 'active', willRenew: false, unsubscribeDetectedAt: T0 + DAY, isActive: true });
      expect(canceling.events).toEqual([{ type: 'subscription.canceled', reason: expirationReason }]);
      const resumed = derive(canceling.subscription, event(UPDATED, sub(), T0 + 2 * DAY));
      expect(resumed.subscription).toMatchObject({ willRenew: true, unsubscribeDetectedAt: null, expirationReason: null });
      expect(resumed.events).toEqual([{ type: 'subscription.uncanceled', reason: expirationReason }]);
      const ended = derive(
        canceling.subscription,
        event('customer.subscription.deleted', sub({ status: 'canceled', ended_at: T1, cancellation_details: { reason } }), T1),
      );
      expect(ended.subscription).toMatchObject({ state: 'expired', expirationReason, expiredAt: T1 });
    },
  );

  it('`customer.subscription.deleted`: `expired` with that reason', () => {
    const result = derive(
      active(),
      event(
        'customer.subscription.deleted',
        sub({ status: 'canceled', ended_at: T0 + 5 * DAY, cancellation_details: { reason: 'cancellation_requested' } }),
        T0 + 5 * DAY,
      ),
    );
    expect(result.subscription).toMatchObject({
      state: 'expired',
      expirationReason: 'unsubscribe',
      expiredAt: T0 + 5 * DAY,
      accessEndsAt: T0 + 5 * DAY,
      isActive: false,
    });
    expect(result.events).toEqual([{ type: 'subscription.expired', expirationReason: 'unsubscribe' }]);
  });

  it('`pause_collection` set / removed: `paused` (access until the current paid period’s end) / back to the status’s state; `autoResumeAt` from `resumes_at`', () => {
    const paused = derive(active(), event(UPDATED, sub({ pause_collection: { resumes_at: T2 } }), T0 + DAY));
    expect(paused.subscription).toMatchObject({ state: 'paused', pausedAt: T0 + DAY, autoResumeAt: T2, accessEndsAt: T1, willRenew: false, isActive: true });
    expect(paused.events).toEqual([{ type: 'subscription.paused', autoResumeAt: T2 }]);
    const resumed = derive(paused.subscription, event(UPDATED, sub({}, { start: T2, end: T2 + 30 * DAY }), T2));
    expect(resumed.subscription).toMatchObject({ state: 'active', pausedAt: null, autoResumeAt: null, isActive: true });
    expect(types(resumed)).toContain('subscription.resumed');
  });

  it('`status: paused` likewise', () => {
    const result = derive(active(), event('customer.subscription.paused', sub({ status: 'paused' }), T0 + DAY), T1 + 1);
    expect(result.subscription).toMatchObject({ state: 'paused', accessEndsAt: T1, isActive: false });
  });

  it('`items` change: `subscription.product_changed` (`effective: "immediate"`)', () => {
    const result = derive(active(), event(UPDATED, sub({}, { product: 'prod_plus' }), T0 + DAY));
    expect(result.subscription).toMatchObject({ productId: 'prod_plus', entitlementKeys: ['plus'] });
    expect(result.events).toEqual([{ type: 'subscription.product_changed', previousProductId: 'prod_pro', effective: 'immediate' }]);
  });

  it('a `schedule`’s next phase → `pendingProductId`', () => {
    const schedule = {
      id: 'sub_sched_1',
      phases: [
        { start_date: T0, items: [{ price: { id: 'price_1', product: 'prod_pro' } }] },
        { start_date: T1, items: [{ price: { id: 'price_2', product: 'prod_plus' } }] },
      ],
    };
    const result = derive(active(), event(UPDATED, sub({ schedule } as Partial<CardSubscriptionObject>), T0 + DAY));
    expect(result.subscription).toMatchObject({ productId: 'prod_pro', pendingProductId: 'prod_plus' });
  });

  it('an unknown status or event type changes nothing: `no_op` with the type recorded', () => {
    const before = active();
    expect(derive(before, event('customer.subscription.trial_will_end', sub(), T0 + DAY))).toMatchObject({
      decision: 'no_op',
      recordedType: 'customer.subscription.trial_will_end',
    });
    expect(derive(before, event(UPDATED, sub({ status: 'future_status' }), T0 + DAY))).toMatchObject({ decision: 'no_op', subscription: before });
  });
});

describe('card lifecycle: money events', () => {
  it('`invoice.paid`: a payment in the ledger, keeping the invoice’s `charge` / `payment_intent` ids', () => {
    const current = derive(active(), event('invoice.paid', invoice(), T1 + 60));
    expect(current.ledger).toEqual([
      {
        kind: 'payment',
        amountMicros: 9_990_000,
        currency: 'USD',
        railTimeMs: (T1 + 60) * 1000,
        transactionId: 'in_2',
        chargeId: null,
        paymentIntentId: 'pi_2',
        recurring: true,
      },
    ]);
    expect(current.decision).toBe('applied');
    const legacy = derive(
      null,
      event('invoice.paid', invoice({ parent: null, payments: null, subscription: 'sub_1', charge: 'ch_2', payment_intent: 'pi_2' }), T1 + 60),
    );
    expect(legacy.ledger[0]).toMatchObject({ chargeId: 'ch_2', paymentIntentId: 'pi_2', recurring: true });
  });

  it('`charge.refunded` (`amount_refunded` grew): a refund in the ledger for the difference; access unchanged', () => {
    const charge: CardChargeObject = { object: 'charge', id: 'ch_2', customer: 'cus_1', amount_refunded: 700, currency: 'usd', payment_intent: 'pi_2' };
    const result = derive(active(), event('charge.refunded', charge, T0 + DAY, { previousAttributes: { amount_refunded: 200 } }));
    expect(result.ledger).toEqual([
      {
        kind: 'refund',
        amountMicros: 5_000_000,
        currency: 'USD',
        railTimeMs: (T0 + DAY) * 1000,
        transactionId: 'ch_2',
        chargeId: 'ch_2',
        paymentIntentId: 'pi_2',
        cardCustomerId: 'cus_1',
      },
    ]);
    expect(result.subscription).toMatchObject({ state: 'active', isActive: true, refundedAt: T0 + DAY });
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 5_000_000, currency: 'USD' }]);
    expect(derive(result.subscription, event('charge.refunded', charge, T0 + 2 * DAY, { refundedBeforeMinor: 700 })).decision).toBe('no_op');
  });

  const dispute = (status = 'needs_response'): CardDisputeObject => ({
    object: 'dispute',
    id: 'dp_1',
    amount: 999,
    currency: 'usd',
    status,
    charge: 'ch_2',
    payment_intent: 'pi_2',
  });

  it('`charge.dispute.created`: `refunded` at once with reason `chargeback`, the disputed amount in the ledger', () => {
    const result = derive(active(), event('charge.dispute.created', dispute(), T0 + 3 * DAY));
    expect(result.subscription).toMatchObject({ state: 'refunded', refundedAt: T0 + 3 * DAY, accessEndsAt: T0 + 3 * DAY, isActive: false });
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'chargeback', amountMicros: 9_990_000, currency: 'USD' }]);
    expect(result.ledger).toMatchObject([{ kind: 'chargeback', amountMicros: 9_990_000, transactionId: 'dp_1', chargeId: 'ch_2' }]);
  });

  it('after a chargeback, an update of the same period keeps `refunded`; a later paid period gives access again', () => {
    const disputed = derive(active(), event('charge.dispute.created', dispute(), T0 + 3 * DAY)).subscription!;
    const same = derive(disputed, event(UPDATED, sub(), T0 + 4 * DAY));
    expect(same.subscription).toMatchObject({ state: 'refunded', isActive: false });
    const next = derive(disputed, event(UPDATED, sub({}, { start: T1, end: T2 }), T1));
    expect(next.subscription).toMatchObject({ state: 'active', isActive: true, accessEndsAt: T2 });
  });

  it('a dispute it cannot link is recorded as a chargeback of the customer (by the charge’s `customer`) with no state change', () => {
    const result = derive(null, event('charge.dispute.created', { ...dispute(), charge: { id: 'ch_9', customer: 'cus_9' } }, T0));
    expect(result).toMatchObject({
      decision: 'applied',
      subscription: null,
      events: [],
      ledger: [{ kind: 'chargeback', cardCustomerId: 'cus_9', chargeId: 'ch_9' }],
    });
  });

  it('`charge.dispute.closed` with `status: won`: back to the state before, the chargeback reversed in the ledger', () => {
    const disputed = derive(active(), event('charge.dispute.created', dispute(), T0 + 3 * DAY)).subscription!;
    const result = derive(disputed, event('charge.dispute.closed', dispute('won'), T0 + 20 * DAY));
    expect(result.subscription).toMatchObject({ state: 'active', accessEndsAt: T1, isActive: true, willRenew: true });
    expect(result.events).toEqual([{ type: 'subscription.refund_reversed', amountMicros: 9_990_000, currency: 'USD' }]);
    expect(result.ledger).toMatchObject([{ kind: 'reversal', amountMicros: 9_990_000 }]);
    expect(derive(disputed, event('charge.dispute.closed', dispute('lost'), T0 + 20 * DAY)).decision).toBe('no_op');
  });
});

describe('card lifecycle: money to micros', () => {
  it.each([
    ['USD (two decimals): 999 cents', 'usd', 999, 1, 9_990_000],
    ['JPY (zero-decimal): 500 yen', 'jpy', 500, 1, 500_000_000],
    ['KWD (three decimals): 1500 fils', 'kwd', 1500, 1, 1_500_000],
    ['BHD (three decimals) × quantity 3', 'bhd', 2500, 3, 7_500_000],
    ['EUR × quantity 4', 'eur', 250, 4, 10_000_000],
  ])('%s', (_name, currency, unit_amount, quantity, amountMicros) => {
    const result = derive(null, event('customer.subscription.created', sub({}, { currency, unit_amount, quantity }), T0));
    expect(result.subscription?.price).toEqual({ amountMicros, currency: currency.toUpperCase() });
  });

  it.each([
    ['a unit amount beyond ±10^15 micros', { unit_amount: 1e14 }, 'data.object.items.data[0].price.unit_amount'],
    ['a unit amount that is not an integer', { unit_amount: 9.5 }, 'data.object.items.data[0].price.unit_amount'],
  ])('%s is a validation error naming the field', (_name, item, field) => {
    const call = () => derive(null, event('customer.subscription.created', sub({}, item), T0));
    expect(call).toThrow(RailFieldError);
    expect(call).toThrow(`${field}:`);
  });

  it('an invoice amount beyond ±10^15 micros names `data.object.amount_paid`', () => {
    expect(() => derive(null, event('invoice.paid', invoice({ amount_paid: Number.MAX_SAFE_INTEGER }), T1))).toThrow('data.object.amount_paid:');
  });
});
