import { DEFAULT_RAIL_READ_TIMEOUT_MS, loadConfig } from '#platform';
import { backsOff } from '../../libs/rails/src/reading/rail-read-errors.js';
import { isLiveRead, stateOfAppStoreStatus } from '../../libs/rails/src/reading/rail-read-states.js';
import { retryAfterMsOf } from '../../libs/rails/src/android/android-publisher.client.js';

const NOW = 1_800_000_000_000;
const tx = { originalTransactionId: '1', productId: 'pro', expiresDate: NOW + 86_400_000 };

describe('reading the rails: pure rules', () => {
  it('the read timeout is 10 s unless RAIL_READ_TIMEOUT_MS says otherwise', () => {
    expect(DEFAULT_RAIL_READ_TIMEOUT_MS).toBe(10_000);
    expect(loadConfig({}).railReadTimeoutMs).toBe(10_000);
    expect(loadConfig({ RAIL_READ_TIMEOUT_MS: '1500' }).railReadTimeoutMs).toBe(1500);
  });

  it('App Store status: active and grace period keep access, expired and billing retry end it, revoked revokes', () => {
    expect(stateOfAppStoreStatus(1, tx, null, NOW)).toEqual({ state: 'active', validUntil: (NOW + 86_400_000) / 1000, rawStatus: 'STATUS_ACTIVE' });
    expect(stateOfAppStoreStatus(4, { ...tx, expiresDate: NOW - 1000 }, { gracePeriodExpiresDate: NOW + 3_600_000 }, NOW)).toEqual({
      state: 'active',
      validUntil: (NOW + 3_600_000) / 1000,
      rawStatus: 'STATUS_BILLING_GRACE_PERIOD',
    });
    expect(stateOfAppStoreStatus(2, { ...tx, expiresDate: NOW - 5000 }, null, NOW)).toEqual({
      state: 'inactive',
      endedBy: 'expired',
      validUntil: (NOW - 5000) / 1000,
      rawStatus: 'STATUS_EXPIRED',
    });
    // Billing retry: no access, ended no later than the read.
    expect(stateOfAppStoreStatus(3, tx, null, NOW)).toEqual({
      state: 'inactive',
      endedBy: 'expired',
      validUntil: NOW / 1000,
      rawStatus: 'STATUS_BILLING_RETRY',
    });
    expect(stateOfAppStoreStatus(5, { ...tx, revocationDate: NOW - 2000 }, null, NOW)).toEqual({
      state: 'inactive',
      endedBy: 'revoked',
      validUntil: (NOW - 2000) / 1000,
      rawStatus: 'STATUS_REVOKED',
    });
    // A revocation date wins over an active status.
    expect(stateOfAppStoreStatus(1, { ...tx, revocationDate: NOW }, null, NOW).endedBy).toBe('revoked');
  });

  it('a read state is live while active and not past its end (lifetime: null)', () => {
    expect(isLiveRead({ active: true, validUntil: null }, NOW)).toBe(true);
    expect(isLiveRead({ active: true, validUntil: NOW / 1000 + 1 }, NOW)).toBe(true);
    expect(isLiveRead({ active: true, validUntil: NOW / 1000 }, NOW)).toBe(false);
    expect(isLiveRead({ active: false, validUntil: null }, NOW)).toBe(false);
  });

  it('Retry-After in seconds or as an HTTP date; 429 and 5xx back off', () => {
    expect(retryAfterMsOf('120', NOW)).toBe(120_000);
    expect(retryAfterMsOf(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(retryAfterMsOf('soon', NOW)).toBeUndefined();
    expect(retryAfterMsOf(undefined, NOW)).toBeUndefined();
    expect([429, 500, 503, 404, 401, undefined].map(backsOff)).toEqual([true, true, true, false, false, false]);
  });
});
