import { RailReader } from '#rails';
import { TenantScopes } from '#platform';
import { railReadHarness } from '../support/harness/rails-read.js';

const DAY = 86_400;

describe('rails: reading the rails (RailReader, refresh)', () => {
  const h = railReadHarness();
  const { now, card, cardCustomer, pro } = h;

  describe('RailReader', () => {
    it('card: a renewal the notification missed is read and applied (entitlement extended, one reconciliation entry)', async () => {
      const { customerId, cardCustomer: cus, sub } = await cardCustomer({ periodEnd: now() + 10 });
      const renewedEnd = now() + 30 * DAY;
      card.subscription(sub.id, cus, { productId: 'prod_pro', periodEnd: renewedEnd, livemode: false });
      const reader = h.t.app.get(RailReader);
      const result = await reader.readRailId(TenantScopes.ofVerifiedRailPayload(h.fx.projectId, 'sandbox'), 'card_payments', cus, 'refresh');
      expect(result).toEqual({ rail: 'card_payments', id: cus, found: 'live', decision: 'applied', auditEventId: expect.stringMatching(/^rail_evt_/) });
      expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: renewedEnd }));
      const entry = (await h.audit(result.auditEventId as string)).body.data;
      expect(entry).toEqual(expect.objectContaining({ eventType: 'reconciliation', reconciledWithProvider: true, decision: 'applied', customerId }));
      // Read again: nothing changes, nothing is written.
      const before = await h.auditCount();
      const again = await reader.readRailId(TenantScopes.ofVerifiedRailPayload(h.fx.projectId, 'sandbox'), 'card_payments', cus, 'refresh');
      expect(again).toEqual({ rail: 'card_payments', id: cus, found: 'live', decision: 'no_change', auditEventId: null });
      expect(await h.auditCount()).toBe(before);
    });
  });
});
