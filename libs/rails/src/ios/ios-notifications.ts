/**
 * App Store Server Notifications V2: which notification types change entitlements and how
 * (docs/rails.md, "iOS App Store"). Pure.
 */
import { checkRailMillis, checkRailText } from '../model/rail-bounds.js';
import type { RailState } from '../model/rail-model.js';
import { type StoreTransaction, stateOfTransaction } from './ios-store-rules.js';

/** Types whose transaction is applied as active (until expiresDate, lifetime without one). */
export const IOS_ACTIVE_TYPES: readonly string[] = [
  'SUBSCRIBED',
  'DID_RENEW',
  'DID_CHANGE_RENEWAL_STATUS',
  'OFFER_REDEEMED',
  'DID_CHANGE_RENEWAL_PREF',
  'ONE_TIME_CHARGE',
];
/** Types that end entitlements: expiry, or at once (refund, revocation). */
export const IOS_EXPIRED_TYPES: readonly string[] = ['EXPIRED', 'GRACE_PERIOD_EXPIRED'];
export const IOS_REVOKED_TYPES: readonly string[] = ['REFUND', 'REVOKE'];

export interface IosNotificationState {
  state: RailState;
  endedBy?: 'revoked' | 'expired';
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  rawStatus: string;
}

const toSeconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * Throws RailFieldError (`signedPayload.<name>`) when a decoded notification carries an id or
 * word over 512 characters or unstorable, or a signedDate (Unix ms) out of range.
 */
export function checkNotificationBounds(notification: {
  notificationType: string;
  subtype?: string;
  notificationUUID: string;
  signedDate: number;
  data?: { bundleId?: string };
}): void {
  checkRailText(notification.notificationType, 'signedPayload.notificationType');
  if (typeof notification.subtype === 'string') checkRailText(notification.subtype, 'signedPayload.subtype');
  checkRailText(notification.notificationUUID, 'signedPayload.notificationUUID');
  checkRailMillis(notification.signedDate, 'signedPayload.signedDate');
  if (typeof notification.data?.bundleId === 'string') checkRailText(notification.data.bundleId, 'signedPayload.data.bundleId');
}

/** Throws RailFieldError when a decoded renewal info's grace period end (Unix ms) is out of range. */
export function checkRenewalBounds(renewal: { gracePeriodExpiresDate?: unknown }): void {
  if (typeof renewal.gracePeriodExpiresDate === 'number') checkRailMillis(renewal.gracePeriodExpiresDate, 'signedRenewalInfo.gracePeriodExpiresDate');
}

/**
 * The state a notification stands for, or null when its type changes no entitlement (TEST,
 * PRICE_INCREASE, DID_FAIL_TO_RENEW without grace period, CONSUMPTION_REQUEST …).
 */
export function stateOfNotification(
  notification: { notificationType: string; subtype?: string; signedDate: number },
  transaction: StoreTransaction,
  renewal: { gracePeriodExpiresDate?: number } | null,
): IosNotificationState | null {
  const type = notification.notificationType;
  const rawStatus = notification.subtype ? `${type}/${notification.subtype}` : type;
  if (IOS_REVOKED_TYPES.includes(type)) {
    return { state: 'inactive', endedBy: 'revoked', validUntil: toSeconds(transaction.revocationDate ?? notification.signedDate), rawStatus };
  }
  if (IOS_EXPIRED_TYPES.includes(type)) {
    const end = transaction.expiresDate ?? notification.signedDate;
    return { state: 'inactive', endedBy: 'expired', validUntil: toSeconds(Math.min(end, notification.signedDate)), rawStatus };
  }
  if (type === 'DID_FAIL_TO_RENEW' && notification.subtype === 'GRACE_PERIOD') {
    const graceEnd = renewal?.gracePeriodExpiresDate ?? transaction.expiresDate;
    return { state: 'active', validUntil: graceEnd === undefined ? null : toSeconds(graceEnd), rawStatus };
  }
  if (IOS_ACTIVE_TYPES.includes(type)) {
    const state = stateOfTransaction(transaction);
    return {
      state: state.state,
      endedBy: state.endedBy,
      validUntil: type === 'ONE_TIME_CHARGE' && state.state === 'active' ? null : state.validUntil,
      rawStatus,
    };
  }
  return null;
}
