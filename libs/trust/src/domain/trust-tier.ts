/** Trusted-device window of tier 2 (spec "Time constants"). */
export const TRUSTED_DEVICE_WINDOW_MS = 90 * 86_400_000;

export type TrustStatus = 'authenticated' | 'recognized' | 'anonymous';
export type RecommendedAction = 'enter' | 'silent_refresh' | 'one_tap' | 'welcome_back' | 'onboard';
export type TrustTierNumber = 0 | 1 | 2 | 3;

export interface TrustEvidence {
  /** A cryptographically verified idToken for userId, right now. */
  verified: boolean;
  /** The device maps to a known user (a customer with a developer user id). */
  knownUser: boolean;
  /** When this device last reached tier 3 for that user (ms), if ever. */
  deviceVerifiedAtMs: number | null;
  passkeyAvailable: boolean;
  nowMs: number;
}

export interface TrustDecision {
  trustTier: TrustTierNumber;
  status: TrustStatus;
  recommendedAction: RecommendedAction;
}

/**
 * The four tiers of the spec, fail-closed: only a verified token gives tier 3; tier 2 needs a
 * known user whose device was verified within the last 90 days (inclusive); tier 1 a known
 * user behind the device; everything else is tier 0.
 */
export function trustTier(evidence: TrustEvidence): TrustDecision {
  if (evidence.verified) return { trustTier: 3, status: 'authenticated', recommendedAction: 'enter' };
  if (!evidence.knownUser) return { trustTier: 0, status: 'anonymous', recommendedAction: 'onboard' };
  const verifiedAt = evidence.deviceVerifiedAtMs;
  if (verifiedAt !== null && verifiedAt <= evidence.nowMs && evidence.nowMs - verifiedAt <= TRUSTED_DEVICE_WINDOW_MS) {
    return { trustTier: 2, status: 'recognized', recommendedAction: evidence.passkeyAvailable ? 'one_tap' : 'silent_refresh' };
  }
  return { trustTier: 1, status: 'recognized', recommendedAction: 'welcome_back' };
}
