import { TRUST_SETTINGS_FRESH_MS, TrustSettingsCache } from '../../libs/trust/src/gate/trust-settings.cache.js';
import type { TrustSettingsRepository } from '../../libs/trust/src/gate/trust-settings.repository.js';
import { EMPTY_TRUST_SETTINGS, type TrustSettings } from '../../libs/trust/src/gate/trust-rules.js';

/** The trust settings cache: fresh entries are used as they are, older ones checked by version, replaced ones reloaded. */
describe('TrustSettingsCache', () => {
  let version: number;
  let settings: TrustSettings;
  let loads: number;
  let probes: number;
  let cache: TrustSettingsCache;

  beforeEach(() => {
    jest.useFakeTimers();
    version = 1;
    settings = EMPTY_TRUST_SETTINGS;
    loads = 0;
    probes = 0;
    const repository = {
      version: async () => {
        probes++;
        return version;
      },
      load: async () => {
        loads++;
        return settings;
      },
    } as unknown as TrustSettingsRepository;
    cache = new TrustSettingsCache(repository);
  });
  afterEach(() => jest.useRealTimers());

  it('reads nothing while fresh; past the bound only the version, and reloads when it moved', async () => {
    await cache.get('proj_a');
    expect({ loads, probes }).toEqual({ loads: 1, probes: 1 });
    await cache.get('proj_a');
    expect({ loads, probes }).toEqual({ loads: 1, probes: 1 });

    jest.advanceTimersByTime(TRUST_SETTINGS_FRESH_MS + 1);
    await cache.get('proj_a');
    expect({ loads, probes }).toEqual({ loads: 1, probes: 2 });

    // Another replica replaced the settings: seen at the next check, within the bound.
    version = 2;
    settings = { supportEmail: 'help@example.com', blocks: [{ kind: 'email', value: 'a@b.c', reason: 'fraud' }], review: { emailDomains: [] } };
    expect(await cache.get('proj_a')).toBe(EMPTY_TRUST_SETTINGS);
    jest.advanceTimersByTime(TRUST_SETTINGS_FRESH_MS + 1);
    expect(await cache.get('proj_a')).toBe(settings);
    expect(loads).toBe(2);
  });

  it('a replace on this replica is seen at once; projects are cached apart', async () => {
    await cache.get('proj_a');
    await cache.get('proj_b');
    expect(loads).toBe(2);
    settings = { ...EMPTY_TRUST_SETTINGS, supportEmail: 'x@example.com' };
    cache.invalidate('proj_a');
    expect(await cache.get('proj_a')).toBe(settings);
    expect(await cache.get('proj_b')).toBe(EMPTY_TRUST_SETTINGS);
  });
});
