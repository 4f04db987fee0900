import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApiError,
  ConfigError,
  SDK_SURFACES,
  SdkVersionPolicy,
  type SdkVersionsManifest,
  isBelowFloor,
  loadConfig,
  loadSdkVersionsManifest,
  parseSdkHeader,
  readSdkVersionHeader,
  surfaceOfClient,
} from '#platform';

// The manifest shipped with the service (read from the working directory, as at run time).
const manifest: SdkVersionsManifest = loadSdkVersionsManifest();

describe('parseSdkHeader', () => {
  it.each([
    ['@service/web@1.2.3', { name: '@service/web', version: '1.2.3' }],
    ['@service/react-native@0.4.0-beta.2', { name: '@service/react-native', version: '0.4.0-beta.2' }],
    ['ServiceSwift@1.3.1', { name: 'ServiceSwift', version: '1.3.1' }],
    ['service-android@1.1.0', { name: 'service-android', version: '1.1.0' }],
    ['  web@0.3.0  ', { name: 'web', version: '0.3.0' }],
  ])('%s', (header, expected) => {
    expect(parseSdkHeader(header)).toEqual(expected);
  });

  it.each([undefined, '', '   ', '@service/web', 'web@', '@1.2.3', 'web'])('rejects %p', (header) => {
    expect(parseSdkHeader(header)).toBeUndefined();
  });
});

describe('the shipped manifest', () => {
  it('has latest and minSupported for every surface, latest >= floor', () => {
    expect(Object.keys(manifest).sort()).toEqual([...SDK_SURFACES].sort());
    for (const surface of SDK_SURFACES) {
      const entry = manifest[surface];
      expect(entry.clientNames).toContain(entry.name);
      expect(isBelowFloor(manifest, surface, entry.latest)).toBe(false);
    }
  });

  it.each([
    ['@cross-deck/web', 'web'],
    ['@cross-deck/node', 'node'],
    ['@cross-deck/react-native', 'react-native'],
    ['@cross-deck/swift', 'swift'],
    ['CrossdeckSDK', 'swift'],
    ['cross-deck-swift', 'swift'],
    ['@cross-deck/android', 'android'],
    ['com.crossdeck:sdk', 'android'],
    ['cross-deck-android', 'android'],
  ])('maps the published client %s to the surface %s', (name, surface) => {
    expect(surfaceOfClient(manifest, name)).toBe(surface);
  });
});

describe('loadSdkVersionsManifest', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sdk-versions-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function write(name: string, content: string): string {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return file;
  }

  it('fails fast on a missing file or bad JSON', () => {
    expect(() => loadSdkVersionsManifest(path.join(dir, 'nope.json'))).toThrow(ConfigError);
    expect(() => loadSdkVersionsManifest(write('bad.json', '{'))).toThrow(ConfigError);
  });

  it('fails fast when a surface is missing or not semver', () => {
    const surfaces = Object.fromEntries(SDK_SURFACES.map((s) => [s, { name: s, latest: '1.0.0', minSupported: '0.1.0' }]));
    expect(loadSdkVersionsManifest(write('ok.json', JSON.stringify({ surfaces }))).web.clientNames).toEqual(['web']);
    const { android: _android, ...withoutAndroid } = surfaces;
    expect(() => loadSdkVersionsManifest(write('missing.json', JSON.stringify({ surfaces: withoutAndroid })))).toThrow(/android/);
    expect(() =>
      loadSdkVersionsManifest(write('semver.json', JSON.stringify({ surfaces: { ...surfaces, swift: { name: 'x', latest: 'one', minSupported: '0.1.0' } } }))),
    ).toThrow(/swift/);
  });
});

describe('surfaceOfClient', () => {
  it.each([
    ['@service/web', 'web'],
    ['service-web', 'web'],
    ['@service/node', 'node'],
    ['ServiceSwift', 'swift'],
    ['@service/react-native', 'react-native'],
    ['service-android', 'android'],
  ])('%s -> %s', (name, surface) => {
    expect(surfaceOfClient(manifest, name)).toBe(surface);
  });

  it('is undefined for an unknown client', () => {
    expect(surfaceOfClient(manifest, '@someone/else')).toBeUndefined();
    expect(surfaceOfClient(manifest, '')).toBeUndefined();
  });
});

describe('isBelowFloor', () => {
  const floor = manifest.web.minSupported; // 0.3.0 in the shipped manifest

  it('is true strictly below the floor', () => {
    expect(isBelowFloor(manifest, 'web', '0.2.9')).toBe(true);
    expect(isBelowFloor(manifest, 'web', '0.0.1')).toBe(true);
    expect(isBelowFloor(manifest, 'web', `${floor}-beta.1`)).toBe(true);
  });

  it('is false at and above the floor', () => {
    expect(isBelowFloor(manifest, 'web', floor)).toBe(false);
    expect(isBelowFloor(manifest, 'web', '0.3.1')).toBe(false);
    expect(isBelowFloor(manifest, 'web', '12.0.0')).toBe(false);
  });

  it('coerces loose versions and never rejects what it cannot read', () => {
    expect(isBelowFloor(manifest, 'web', 'v0.2')).toBe(true);
    expect(isBelowFloor(manifest, 'web', '0.2')).toBe(true);
    expect(isBelowFloor(manifest, 'web', 'garbage')).toBe(false);
    expect(isBelowFloor(manifest, 'web', '')).toBe(false);
  });

  it('uses the floor of the given surface', () => {
    expect(manifest.swift.minSupported).toBe('0.5.0');
    expect(isBelowFloor(manifest, 'swift', '0.4.9')).toBe(true);
    expect(isBelowFloor(manifest, 'web', '0.4.9')).toBe(false);
  });
});

describe('SdkVersionPolicy.assertSupported', () => {
  const enforced = new SdkVersionPolicy(loadConfig({ SDK_VERSION_ENFORCEMENT: 'enabled' }), manifest);
  const dark = new SdkVersionPolicy(loadConfig({}), manifest);

  it('ships dark: never throws while enforcement is off', () => {
    expect(dark.enforced).toBe(false);
    expect(() => dark.assertSupported({ name: '@service/web', version: '0.0.1' })).not.toThrow();
  });

  it('throws 426 sdk_version_unsupported with minVersion and surface when on and below the floor', () => {
    expect(enforced.enforced).toBe(true);
    let thrown: unknown;
    try {
      enforced.assertSupported(parseSdkHeader('@service/react-native@0.3.9'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const error = thrown as ApiError;
    expect(error.status).toBe(426);
    expect(error.type).toBe('version_error');
    expect(error.code).toBe('sdk_version_unsupported');
    expect(error.extra).toEqual({ minVersion: '0.4.0', surface: 'react-native' });
    expect(error.message).toContain('0.4.0');
  });

  it('accepts supported, unknown, unparseable and absent clients', () => {
    expect(() => enforced.assertSupported({ name: '@service/web', version: '0.3.0' })).not.toThrow();
    expect(() => enforced.assertSupported({ name: '@service/web', version: '1.6.0' })).not.toThrow();
    expect(() => enforced.assertSupported({ name: 'unknown-sdk', version: '0.0.1' })).not.toThrow();
    expect(() => enforced.assertSupported({ name: '@service/web', version: 'dev' })).not.toThrow();
    expect(() => enforced.assertSupported(undefined)).not.toThrow();
  });

  it('never answers 426 naming a surface outside the spec list (web, node, swift, react-native): android below its floor is accepted', () => {
    expect(enforced.manifest.android.minSupported).toBe('0.4.0');
    expect(() => enforced.assertSupported({ name: '@cross-deck/android', version: '0.1.0' })).not.toThrow();
    expect(() => enforced.assertSupported({ name: 'service-android', version: '0.3.9' })).not.toThrow();
  });

  it('surfaceOf maps a client identity to its surface', () => {
    expect(enforced.surfaceOf({ name: 'service-android', version: '1.0.0' })).toBe('android');
    expect(enforced.surfaceOf(undefined)).toBeUndefined();
  });
});

describe('client-version header', () => {
  it("reads Service-Sdk-Version, then the clients' Crossdeck-Sdk-Version", () => {
    expect(readSdkVersionHeader({ 'crossdeck-sdk-version': '@cross-deck/web@1.14.1' })).toBe('@cross-deck/web@1.14.1');
    expect(readSdkVersionHeader({ 'service-sdk-version': 'web@1.0.0', 'crossdeck-sdk-version': '@cross-deck/web@1.14.1' })).toBe('web@1.0.0');
    expect(readSdkVersionHeader({ 'service-sdk-version': ' ', 'crossdeck-sdk-version': '@cross-deck/web@1.14.1' })).toBe('@cross-deck/web@1.14.1');
    expect(readSdkVersionHeader({})).toBeUndefined();
  });
});
