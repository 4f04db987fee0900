import { refundReasonOf } from '../../libs/rails/src/android/android-webhook.service.js';
import { voidedListEntry } from '../../libs/rails/src/android/android-voided-reads.job.js';

describe('Android voided purchases', () => {
  it('voidedReason 7, 8 and 9 are chargebacks; any other voiding, or none, is a refund', () => {
    expect([7, 8, 9].map(refundReasonOf)).toEqual(['chargeback', 'chargeback', 'chargeback']);
    expect([0, 1, 6, 10, null].map(refundReasonOf)).toEqual(['refund', 'refund', 'refund', 'refund', 'refund']);
  });

  it('a list entry keeps its token, order id, voided time and reason; one without a usable token is skipped', () => {
    expect(voidedListEntry({ purchaseToken: 'tok', orderId: 'GPA.1', voidedTimeMillis: '1700000000000', voidedReason: 7, voidedSource: 2 })).toEqual({
      purchaseToken: 'tok',
      orderId: 'GPA.1',
      voidedTimeMillis: 1_700_000_000_000,
      voidedReason: 7,
    });
    expect(voidedListEntry({ purchaseToken: 'tok', voidedTimeMillis: 'soon', voidedReason: -1 })).toEqual({
      purchaseToken: 'tok',
      orderId: null,
      voidedTimeMillis: null,
      voidedReason: null,
    });
    expect(voidedListEntry({ orderId: 'GPA.2' })).toBeNull();
    expect(voidedListEntry({ purchaseToken: 'x'.repeat(513) })).toBeNull();
    expect(voidedListEntry({ purchaseToken: 'a\u0000b' })).toBeNull();
  });
});
