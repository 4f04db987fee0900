import { TRUSTED_DEVICE_WINDOW_MS, trustTier, type TrustEvidence } from '#trust';

const NOW = 1_800_000_000_000;
const base: TrustEvidence = { verified: false, knownUser: false, deviceVerifiedAtMs: null, passkeyAvailable: false, nowMs: NOW };

describe('trust: tier function', () => {
  it('tier 3: a verified token, whatever else is known', () => {
    for (const extra of [{}, { knownUser: true }, { deviceVerifiedAtMs: NOW - 1000, knownUser: true, passkeyAvailable: true }]) {
      expect(trustTier({ ...base, verified: true, ...extra })).toEqual({ trustTier: 3, status: 'authenticated', recommendedAction: 'enter' });
    }
  });

  it('tier 0: no known user behind the device (a binding alone is not enough)', () => {
    expect(trustTier(base)).toEqual({ trustTier: 0, status: 'anonymous', recommendedAction: 'onboard' });
    expect(trustTier({ ...base, deviceVerifiedAtMs: NOW - 1000 })).toEqual({ trustTier: 0, status: 'anonymous', recommendedAction: 'onboard' });
  });

  it('tier 1: known user, never verified on this device', () => {
    expect(trustTier({ ...base, knownUser: true })).toEqual({ trustTier: 1, status: 'recognized', recommendedAction: 'welcome_back' });
    expect(trustTier({ ...base, knownUser: true, passkeyAvailable: true }).recommendedAction).toBe('welcome_back');
  });

  it('tier 2: verified on this device within the last 90 days (inclusive): one_tap with a passkey, else silent_refresh', () => {
    const recent = { ...base, knownUser: true, deviceVerifiedAtMs: NOW - 89 * 86_400_000 };
    expect(trustTier(recent)).toEqual({ trustTier: 2, status: 'recognized', recommendedAction: 'silent_refresh' });
    expect(trustTier({ ...recent, passkeyAvailable: true })).toEqual({ trustTier: 2, status: 'recognized', recommendedAction: 'one_tap' });
    expect(trustTier({ ...recent, deviceVerifiedAtMs: NOW - TRUSTED_DEVICE_WINDOW_MS }).trustTier).toBe(2);
  });

  it('after 90 days the device falls back to tier 1', () => {
    const stale = { ...base, knownUser: true, deviceVerifiedAtMs: NOW - TRUSTED_DEVICE_WINDOW_MS - 1 };
    expect(trustTier(stale)).toEqual({ trustTier: 1, status: 'recognized', recommendedAction: 'welcome_back' });
  });

  it('a verification time in the future does not elevate (fail closed)', () => {
    expect(trustTier({ ...base, knownUser: true, deviceVerifiedAtMs: NOW + 60_000 }).trustTier).toBe(1);
  });
});
