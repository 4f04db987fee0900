import { historyOf, newHistoryId, type RailStateChange } from '../../libs/rails/src/model/rail-state-applier.service.js';

const change: RailStateChange = {
  rail: 'card_payments',
  subscriptionId: 'sub_1',
  customerId: 'cdcust_1',
  productId: 'prod_basic',
  state: 'active',
  validUntil: 1_800_000_000,
  railTimeMs: 1_790_000_000_123,
  rawStatus: 'active',
};

describe('customer history entries of one change (historyOf)', () => {
  it('one entry per lifecycle event, in the order announced, with the type’s own fields as details', () => {
    const lifecycle = {
      subscription: null,
      decision: 'applied' as const,
      railEventId: 'evt_1',
      events: [{ type: 'subscription.started' as const, periodType: 'trial' as const, isTrialStart: true }, { type: 'purchase.completed' as const }],
    };
    const written = historyOf(change, lifecycle, 'rail_evt_a', { notificationId: 'ignored' });
    expect(written).toEqual([
      {
        id: expect.stringMatching(/^hist_[a-z0-9]{24}$/),
        customerId: 'cdcust_1',
        type: 'subscription.started',
        occurredAtMs: 1_790_000_000_123,
        rail: 'card_payments',
        subscriptionId: 'sub_1',
        productId: 'prod_basic',
        auditEventId: 'rail_evt_a',
        railEventId: 'evt_1',
        details: { periodType: 'trial', isTrialStart: true },
      },
      expect.objectContaining({ type: 'purchase.completed', details: {}, railEventId: 'evt_1' }),
    ]);
    expect(written[0].id).not.toBe(written[1].id);
    // A read names no rail event of its own.
    expect(historyOf(change, { ...lifecycle, railEventId: null }, 'rail_evt_a', {})[0].railEventId).toBeNull();
  });

  it('a rail without lifecycle: the record’s event types, no details, the notification id as the rail event', () => {
    expect(historyOf(change, undefined, 'rail_evt_b', { notificationId: 'ntf_1' }, ['subscription.started'])).toEqual([
      expect.objectContaining({ type: 'subscription.started', details: {}, railEventId: 'ntf_1', productId: 'prod_basic', auditEventId: 'rail_evt_b' }),
    ]);
    expect(historyOf(change, undefined, 'rail_evt_b', { notificationId: '' }, ['subscription.expired'])[0].railEventId).toBeNull();
    expect(historyOf(change, undefined, 'rail_evt_b', {})).toEqual([]);
    expect(newHistoryId()).toMatch(/^hist_[a-z0-9]{24}$/);
  });
});
