/**
 * What a read of a rail says, reduced to the shared model: the App Store Server API's
 * subscription status, and whether a read state is live. Pure.
 */
import type { IosNotificationState } from '../ios/ios-notifications.js';
import type { StoreTransaction } from '../ios/ios-store-rules.js';

/** "Get All Subscription Statuses" `status` values. */
export const APP_STORE_STATUS = { active: 1, expired: 2, billingRetry: 3, gracePeriod: 4, revoked: 5 } as const;

const STATUS_WORDS: Record<number, string> = {
  1: 'STATUS_ACTIVE',
  2: 'STATUS_EXPIRED',
  3: 'STATUS_BILLING_RETRY',
  4: 'STATUS_BILLING_GRACE_PERIOD',
  5: 'STATUS_REVOKED',
};

const toSeconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * The state of one subscription as the App Store Server API reports it: active and grace
 * period keep access (until `expiresDate`, or the renewal's `gracePeriodExpiresDate`);
 * expired and billing retry end it; revoked (or a `revocationDate`) revokes it at once.
 */
export function stateOfAppStoreStatus(
  status: number | undefined,
  transaction: StoreTransaction,
  renewal: { gracePeriodExpiresDate?: number } | null,
  readAtMs: number,
): IosNotificationState {
  const rawStatus = STATUS_WORDS[status ?? 0] ?? `STATUS_${status ?? 'UNKNOWN'}`;
  if (status === APP_STORE_STATUS.revoked || typeof transaction.revocationDate === 'number') {
    return { state: 'inactive', endedBy: 'revoked', validUntil: toSeconds(transaction.revocationDate ?? readAtMs), rawStatus };
  }
  if (status === APP_STORE_STATUS.active) {
    return { state: 'active', validUntil: typeof transaction.expiresDate === 'number' ? toSeconds(transaction.expiresDate) : null, rawStatus };
  }
  if (status === APP_STORE_STATUS.gracePeriod) {
    const end = renewal?.gracePeriodExpiresDate ?? transaction.expiresDate;
    return { state: 'active', validUntil: typeof end === 'number' ? toSeconds(end) : null, rawStatus };
  }
  // Expired, in billing retry (no access without a grace period), or a status the service does not know.
  const end = Math.min(transaction.expiresDate ?? readAtMs, readAtMs);
  return { state: 'inactive', endedBy: 'expired', validUntil: toSeconds(end), rawStatus };
}

/** Whether a read state grants access at `nowMs` (active, and not past its end; null = lifetime). */
export function isLiveRead(state: { active: boolean; validUntil: number | null }, nowMs: number): boolean {
  return state.active && (state.validUntil === null || state.validUntil * 1000 > nowMs);
}
