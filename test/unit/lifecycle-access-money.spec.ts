// The States table's "access" column at boundary times, the state a reversed refund returns to,
// and the rails' amounts in micros.
import { RailFieldError } from '../../libs/rails/src/model/rail-bounds.js';
import { isActiveAt, restoredAfterReversal, stateBeforeRefund } from '../../libs/rails/src/lifecycle/access.js';
import {
  MAX_ABS_MICROS,
  androidMoneyToMicros,
  cardCurrencyExponent,
  cardMinorToMicros,
  checkMicros,
  iosMilliunitsToMicros,
} from '../../libs/rails/src/lifecycle/money.js';
import type { Subscription, SubscriptionState } from '../../libs/rails/src/lifecycle/subscription.js';

const END = 1_800_000_000;

describe('States: access at the service clock', () => {
  it.each<[string, SubscriptionState, boolean]>([
    ['`active`: yes, until `currentPeriodEndsAt`', 'active', true],
    ['`trialing`: yes, until the trial’s end', 'trialing', true],
    ['`in_grace_period`: yes, until `gracePeriodEndsAt`', 'in_grace_period', true],
    ['`in_billing_retry`: only until the end of the last paid period, then no', 'in_billing_retry', true],
    ['`paused`: until the end of the paid period, then no', 'paused', true],
  ])('%s', (_row, state) => {
    expect(isActiveAt({ state, accessEndsAt: END }, END - 1)).toBe(true);
    expect(isActiveAt({ state, accessEndsAt: END }, END)).toBe(false);
    expect(isActiveAt({ state, accessEndsAt: END }, END + 1)).toBe(false);
  });

  it.each<[string, SubscriptionState]>([
    ['`on_hold`: no', 'on_hold'],
    ['`expired`: no', 'expired'],
    ['`refunded`: no', 'refunded'],
  ])('%s, whatever `accessEndsAt` says', (_row, state) => {
    expect(isActiveAt({ state, accessEndsAt: END }, END - 100)).toBe(false);
    expect(isActiveAt({ state, accessEndsAt: null }, END)).toBe(false);
  });

  it('`active` lifetime (`accessEndsAt: null`) gives access at any time', () => {
    expect(isActiveAt({ state: 'active', accessEndsAt: null }, Number.MAX_SAFE_INTEGER)).toBe(true);
  });
});

describe('the state before a refund, when it is reversed', () => {
  const base = {
    state: 'refunded',
    kind: 'auto_renewing',
    periodType: 'normal',
    currentPeriodStartsAt: END - 100,
    currentPeriodEndsAt: END,
    gracePeriodEndsAt: null,
    billingIssueDetectedAt: null,
    pausedAt: null,
    expiredAt: null,
    expirationReason: 'refund',
    unsubscribeDetectedAt: null,
    accessEndsAt: END - 50,
  } as unknown as Subscription;

  it.each<[string, Partial<Subscription>, SubscriptionState]>([
    ['active', {}, 'active'],
    ['trialing in a trial period', { periodType: 'trial' }, 'trialing'],
    ['in the grace period while a billing problem had one', { billingIssueDetectedAt: END - 90, gracePeriodEndsAt: END + 10 }, 'in_grace_period'],
    ['in billing retry while a billing problem had none', { billingIssueDetectedAt: END - 90 }, 'in_billing_retry'],
    ['paused while paused', { pausedAt: END - 90 }, 'paused'],
    ['expired when it had ended', { expiredAt: END - 90, expirationReason: 'unsubscribe' }, 'expired'],
  ])('%s', (_name, fields, state) => {
    expect(stateBeforeRefund({ ...base, ...fields })).toBe(state);
  });

  it('restores access to its end and clears the refund as the expiration reason', () => {
    expect(restoredAfterReversal(base, null)).toMatchObject({ state: 'active', accessEndsAt: END, expirationReason: null, willRenew: true });
    expect(restoredAfterReversal({ ...base, billingIssueDetectedAt: END - 90 }, END - 100)).toMatchObject({
      state: 'in_billing_retry',
      accessEndsAt: END - 100,
      willRenew: false,
    });
  });
});

describe('money to micros', () => {
  it.each([
    ['USD', 2],
    ['usd', 2],
    ['EUR', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['XOF', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['JOD', 3],
    ['OMR', 3],
    ['TND', 3],
    ['ISK', 2],
    ['HUF', 2],
  ])('card currency %s has exponent %d (as the processor states amounts)', (currency, exponent) => {
    expect(cardCurrencyExponent(currency)).toBe(exponent);
  });

  it.each([
    ['iOS milliunits ×1000: 9990 → 9.99', () => iosMilliunitsToMicros(9990, 'price'), 9_990_000],
    ['iOS milliunits ×1000: 0 (free trial)', () => iosMilliunitsToMicros(0, 'price'), 0],
    ['card minor units, two decimals: 999 USD cents', () => cardMinorToMicros(999, 'USD', 'unit_amount'), 9_990_000],
    ['card minor units, zero-decimal: 500 JPY', () => cardMinorToMicros(500, 'JPY', 'unit_amount'), 500_000_000],
    ['card minor units, three decimals: 1500 KWD fils', () => cardMinorToMicros(1500, 'KWD', 'unit_amount'), 1_500_000],
    ['card minor units × quantity 3', () => cardMinorToMicros(999, 'USD', 'unit_amount', 3), 29_970_000],
    ['Android units + nanos / 1000: 4 + 990000000', () => androidMoneyToMicros({ units: '4', nanos: 990_000_000 }, 'price'), 4_990_000],
    ['Android units only (no nanos)', () => androidMoneyToMicros({ units: '12' }, 'price'), 12_000_000],
    ['Android a negative amount (units and nanos of the same sign)', () => androidMoneyToMicros({ units: '-1', nanos: -500_000_000 }, 'price'), -1_500_000],
    ['Android nanos below a micro round to the micro', () => androidMoneyToMicros({ units: '0', nanos: 1_499 }, 'price'), 1],
  ])('%s', (_name, convert, micros) => {
    expect(convert()).toBe(micros);
  });

  it('±10^15 micros are the bounds, inclusive', () => {
    expect(checkMicros(MAX_ABS_MICROS, 'x')).toBe(MAX_ABS_MICROS);
    expect(checkMicros(-MAX_ABS_MICROS, 'x')).toBe(-MAX_ABS_MICROS);
    expect(() => checkMicros(MAX_ABS_MICROS + 1, 'x')).toThrow(RailFieldError);
  });

  it.each([
    ['iOS beyond the bounds', () => iosMilliunitsToMicros(1e12 + 1, 'signedTransactionInfo.price'), 'signedTransactionInfo.price'],
    ['iOS not finite', () => iosMilliunitsToMicros(Number.POSITIVE_INFINITY, 'signedTransactionInfo.price'), 'signedTransactionInfo.price'],
    ['card beyond the bounds (JPY scales by 10^6)', () => cardMinorToMicros(1e9 + 1, 'JPY', 'data.object.amount'), 'data.object.amount'],
    ['card not a safe integer', () => cardMinorToMicros(2 ** 60, 'USD', 'data.object.amount'), 'data.object.amount'],
    ['card not an integer', () => cardMinorToMicros(1.5, 'USD', 'data.object.amount'), 'data.object.amount'],
    ['Android units beyond the bounds', () => androidMoneyToMicros({ units: '9223372036854775807' }, 'purchase.price'), 'purchase.price'],
    ['Android units not an integer', () => androidMoneyToMicros({ units: '1e3' }, 'purchase.price'), 'purchase.price.units'],
  ])('%s is a validation error naming the field', (_name, convert, field) => {
    expect(convert).toThrow(RailFieldError);
    expect(convert).toThrow(`${field}:`);
  });
});
