import { EXPIRY_READ_BACKOFF_MS, expiryBackoffMs, settleExpiryRead } from '../../libs/rails/src/reconcile/expiry-reads.js';
import { distinctRailIds, gateOutcome } from '../../libs/migration/src/domain/migration-gate.js';

const MIN = 60_000;

describe('reads at expiry: back-off and settlement', () => {
  it('an unreadable rail is read again after 5 min, 30 min, 2 h, then every 12 h', () => {
    expect(EXPIRY_READ_BACKOFF_MS).toEqual([5 * MIN, 30 * MIN, 120 * MIN, 720 * MIN]);
    expect([1, 2, 3, 4, 5, 9].map(expiryBackoffMs)).toEqual([5 * MIN, 30 * MIN, 120 * MIN, 720 * MIN, 720 * MIN, 720 * MIN]);
    expect(expiryBackoffMs(0)).toBe(5 * MIN);
  });

  it('unavailable counts an attempt and schedules its back-off; the row stays pending', () => {
    expect(settleExpiryRead({ found: 'unavailable', decision: 'unavailable' }, 0, 1_000)).toEqual({
      status: 'pending',
      attempts: 1,
      nextReadAtMs: 1_000 + 5 * MIN,
      outcome: 'unavailable',
    });
    expect(settleExpiryRead({ found: 'unavailable', decision: 'unavailable' }, 3, 0)).toMatchObject({ attempts: 4, nextReadAtMs: 720 * MIN });
  });

  it('a store asking to wait longer than the back-off is honoured (an attempt)', () => {
    expect(settleExpiryRead({ found: 'unavailable', decision: 'unavailable', retryAfterMs: 3_600_000 }, 0, 0)).toMatchObject({
      attempts: 1,
      nextReadAtMs: 3_600_000,
    });
    expect(settleExpiryRead({ found: 'unavailable', decision: 'unavailable', retryAfterMs: 30_000 }, 0, 0)).toMatchObject({
      attempts: 1,
      nextReadAtMs: 5 * MIN,
    });
  });

  it('a read refused by the project read rate waits as asked without counting an attempt', () => {
    expect(settleExpiryRead({ found: 'unavailable', decision: 'unavailable', retryAfterMs: 1_500.2, throttled: true }, 2, 10_000)).toEqual({
      status: 'pending',
      attempts: 2,
      nextReadAtMs: 11_501,
      outcome: 'rate_limited',
    });
  });

  it('a readable rail settles the row: applied, no change, or no subscription', () => {
    expect(settleExpiryRead({ found: 'live', decision: 'applied' }, 1, 5)).toEqual({ status: 'done', attempts: 1, nextReadAtMs: 5, outcome: 'applied' });
    expect(settleExpiryRead({ found: 'ended', decision: 'applied' }, 0, 5).outcome).toBe('applied');
    expect(settleExpiryRead({ found: 'live', decision: 'no_change' }, 0, 5).outcome).toBe('no_change');
    expect(settleExpiryRead({ found: 'none', decision: 'no_subscription' }, 0, 5)).toMatchObject({ status: 'done', outcome: 'no_subscription' });
  });
});

describe('migration gate', () => {
  it('stored records decide first: live is rail-backed, lapsed is lapsed, whatever a read found', () => {
    expect(gateOutcome('live', 1, ['none'])).toBe('skipped_rail_backed');
    expect(gateOutcome('lapsed', 1, ['unavailable'])).toBe('skipped_lapsed');
  });

  it('no record and no purchase id: the grant', () => {
    expect(gateOutcome('none', 0, [])).toBe('grant');
  });

  it('read from the rails: live, ended, no subscription, unreadable', () => {
    expect(gateOutcome('none', 1, ['live'])).toBe('skipped_rail_backed');
    expect(gateOutcome('none', 2, ['unavailable', 'live'])).toBe('skipped_rail_backed');
    expect(gateOutcome('none', 1, ['ended'])).toBe('skipped_lapsed');
    expect(gateOutcome('none', 2, ['none', 'ended'])).toBe('skipped_lapsed');
    expect(gateOutcome('none', 2, ['none', 'none'])).toBe('grant');
    expect(gateOutcome('none', 2, ['none', 'unavailable'])).toBe('undetermined');
    // An id not read (the request's read budget ran out) is not a "no subscription".
    expect(gateOutcome('none', 2, ['none'])).toBe('undetermined');
  });

  it('rail ids are read once each', () => {
    expect(
      distinctRailIds([
        { rail: 'card_payments', value: 'cus_1' },
        { rail: 'card_payments', value: 'cus_1' },
        { rail: 'ios_store', value: 'cus_1' },
      ]),
    ).toEqual([
      { rail: 'card_payments', value: 'cus_1' },
      { rail: 'ios_store', value: 'cus_1' },
    ]);
  });
});
