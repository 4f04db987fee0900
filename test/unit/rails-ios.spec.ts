import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Environment } from '@apple/app-store-server-library';
import { APPLE_ROOT_CERTIFICATES, appleRootCertificates } from '../../libs/rails/src/ios/apple-root-certificates.js';
import { envOfStoreEnvironment, normaliseAppAccountToken, stateOfTransaction } from '../../libs/rails/src/ios/ios-store-rules.js';
import { parsePemCertificates } from '../../libs/rails/src/ios/ios-store-settings.js';
import { IosStoreVerifier, StoreSignedDataVerifier, StoreVerificationError } from '../../libs/rails/src/ios/ios-store-verifier.service.js';
import type { RailSettingsRecord } from '../../libs/rails/src/model/rail-settings.repository.js';
import type { IosStoreSettings } from '../../libs/rails/src/ios/ios-store-settings.js';
import { changesState, customerRailStatus, isOlderThanStored } from '../../libs/rails/src/model/rail-model.js';
import { purchaseSyncRail, transactionDedupId } from '../../libs/rails/src/purchases/purchase-sync.service.js';
import { createStoreChain, signStoreJws, tamperJws, transactionPayload } from '../support/store-signing.js';

const BUNDLE = 'com.example.app';

function settings(over: Partial<IosStoreSettings> = {}, version = 1): RailSettingsRecord<IosStoreSettings> {
  return { rail: 'ios_store', settings: { bundleId: BUNDLE, ...over }, enabled: true, version, updatedAtMs: 0 };
}

describe('rails: iOS store rules', () => {
  it('maps the decoded environment: Production to production, anything else to sandbox', () => {
    expect(envOfStoreEnvironment('Production')).toBe('production');
    expect(envOfStoreEnvironment('Sandbox')).toBe('sandbox');
    expect(envOfStoreEnvironment('Xcode')).toBe('sandbox');
    expect(envOfStoreEnvironment(undefined)).toBe('sandbox');
  });

  it('derives state and validUntil from a transaction', () => {
    expect(stateOfTransaction({ expiresDate: 1_800_000_000_500, type: 'Auto-Renewable Subscription' })).toEqual({
      state: 'active',
      validUntil: 1_800_000_000,
      rawStatus: 'Auto-Renewable Subscription',
    });
    expect(stateOfTransaction({ type: 'Non-Consumable' })).toEqual({ state: 'active', validUntil: null, rawStatus: 'Non-Consumable' });
    expect(stateOfTransaction({ expiresDate: 1_800_000_000_000, revocationDate: 1_700_000_000_000 })).toEqual({
      state: 'inactive',
      endedBy: 'revoked',
      validUntil: 1_700_000_000,
      rawStatus: 'REVOKED',
    });
  });

  it('de-duplicates a transaction and, separately, its revoked version; maps the body rail', () => {
    expect(transactionDedupId('2000', { endedBy: undefined })).toBe('2000');
    expect(transactionDedupId('2000', { endedBy: 'revoked' })).toBe('2000:revoked');
    expect(purchaseSyncRail('apple')).toBe('ios_store');
    expect(purchaseSyncRail('ios_store')).toBe('ios_store');
    expect(() => purchaseSyncRail('card_payments')).toThrow(/\/v1\/webhooks\/card_payments\//);
  });

  it('normalises app account tokens to lowercase UUIDs', () => {
    expect(normaliseAppAccountToken('5D3A9B3E-2C4F-4A8B-9E1D-7F6C5B4A3D2E')).toBe('5d3a9b3e-2c4f-4a8b-9e1d-7f6c5b4a3d2e');
    expect(normaliseAppAccountToken('not-a-uuid')).toBeNull();
    expect(normaliseAppAccountToken(undefined)).toBeNull();
  });

  it('rail model: newest rail time wins, change detection, customer status for the migration gate', () => {
    expect(isOlderThanStored(null, 1)).toBe(false);
    expect(isOlderThanStored({ railTimeMs: 10 }, 9)).toBe(true);
    expect(isOlderThanStored({ railTimeMs: 10 }, 10)).toBe(false);
    expect(isOlderThanStored({ railTimeMs: 10 }, 9, true)).toBe(false);
    const base = { customerId: 'c', productId: 'p', state: 'active' as const, validUntil: 5 };
    expect(changesState(base, base)).toBe(false);
    expect(changesState(base, { ...base, validUntil: 6 })).toBe(true);
    expect(customerRailStatus([], 0)).toBe('none');
    expect(customerRailStatus([{ state: 'active', validUntil: 10 }], 9_000)).toBe('live');
    expect(customerRailStatus([{ state: 'active', validUntil: 10 }], 10_000)).toBe('lapsed');
    expect(customerRailStatus([{ state: 'inactive', validUntil: null }], 0)).toBe('lapsed');
  });
});

describe('rails: shipped App Store roots', () => {
  it('the embedded roots are the committed certificate files, with the pinned SHA-256 fingerprints', () => {
    for (const root of APPLE_ROOT_CERTIFICATES) {
      const file = readFileSync(path.join(__dirname, '../../libs/rails/certs', root.file));
      expect(Buffer.from(root.der, 'base64').equals(file)).toBe(true);
      const fingerprint = createHash('sha256').update(file).digest('hex').toUpperCase().match(/../g)!.join(':');
      expect(fingerprint).toBe(root.sha256);
      const cert = new X509Certificate(file);
      expect(cert.verify(cert.publicKey)).toBe(true); // self-signed root
    }
    expect(new X509Certificate(appleRootCertificates()[0]).subject).toContain('CN=Apple Root CA - G3');
  });

  it('builds the verifier with the shipped roots by default, and with the configured roots when set', () => {
    const verifiers = new IosStoreVerifier();
    const byDefault = verifiers.verifierFor('proj_a', settings(), 'sandbox');
    expect(byDefault.trustedRoots.map((der) => der.toString('base64'))).toEqual(appleRootCertificates().map((der) => der.toString('base64')));
    const chain = createStoreChain();
    const configured = verifiers.verifierFor('proj_a', settings({ trustedRootCertificates: [chain.rootPem] }, 2), 'sandbox');
    expect(configured.trustedRoots.map((der) => der.toString('base64'))).toEqual([chain.rootDer.toString('base64')]);
    expect(verifiers.verifierFor('proj_a', settings({ trustedRootCertificates: [chain.rootPem] }, 2), 'sandbox')).toBe(configured);
  });

  it("verifies Apple's genuine signing chain (published in the store library's package) against the shipped Apple Root CA - G3", async () => {
    // No genuine store-signed JWS payload ships with the library; its tests do ship a real
    // App Store receipt-signing leaf and WWDR G6 intermediate, which chain to Apple Root CA - G3.
    const source = readFileSync(require.resolve('@apple/app-store-server-library/dist/tests/unit-tests/jws_verification.test.js'), 'utf8');
    const constant = (name: string) => Buffer.from(new RegExp(`${name} = "([^"]+)"`).exec(source)![1], 'base64');
    const leaf = new X509Certificate(constant('REAL_APPLE_SIGNING_CERTIFICATE_BASE64_ENCODED'));
    const intermediate = new X509Certificate(constant('REAL_APPLE_INTERMEDIATE_BASE64_ENCODED'));
    class ChainProbe extends StoreSignedDataVerifier {
      probe(at: Date) {
        return this.verifyCertificateChainWithoutCaching(this.rootCertificates, leaf, intermediate, at);
      }
    }
    const probe = new ChainProbe(appleRootCertificates(), Environment.PRODUCTION, BUNDLE, undefined);
    const key = await probe.probe(new Date(1_761_962_975_000)); // October 2025, inside the leaf's validity
    expect(key.export({ type: 'spki', format: 'der' }).equals(leaf.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
    // and a chain the shipped roots do not anchor is refused
    const chain = createStoreChain();
    const foreign = new ChainProbe(appleRootCertificates(), Environment.PRODUCTION, BUNDLE, undefined);
    await expect(
      foreign['verifyCertificateChainWithoutCaching'](
        foreign['rootCertificates'],
        new X509Certificate(chain.leafDer),
        new X509Certificate(chain.intermediateDer),
        new Date(),
      ),
    ).rejects.toThrow();
  });
});

describe('rails: iOS store verification with a test chain', () => {
  const chain = createStoreChain();
  const rail = settings({ trustedRootCertificates: [chain.rootPem] });
  const verifiers = new IosStoreVerifier();
  const payload = (over: Record<string, unknown> = {}) => transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: Date.now(), ...over });

  it('accepts a sandbox and a production transaction, production tried first', async () => {
    const sandbox = await verifiers.verifyTransaction('p', rail, signStoreJws(chain, payload()));
    expect(sandbox.env).toBe('sandbox');
    const production = await verifiers.verifyTransaction('p', rail, signStoreJws(chain, payload({ environment: 'Production' })));
    expect(production.env).toBe('production');
    expect(production.payload.productId).toBe('pro.monthly');
  });

  it('refuses a bad signature, an untrusted root, missing marker OIDs, a wrong bundle id, garbage', async () => {
    const cases: [string, string][] = [
      ['tampered', tamperJws(signStoreJws(chain, payload()), payload({ productId: 'other' }))],
      ['untrusted root', signStoreJws(createStoreChain(), payload())],
      ['no leaf OID', signStoreJws(createStoreChain({ leafOid: false }), payload())],
      ['wrong bundle', signStoreJws(chain, payload({ bundleId: 'com.other.app' }))],
      ['garbage', 'not.a.jws'],
      ['xcode', signStoreJws(chain, payload({ environment: 'Xcode' }))],
    ];
    for (const [name, jws] of cases) {
      await expect(verifiers.verifyTransaction('p', rail, jws)).rejects.toBeInstanceOf(StoreVerificationError);
      void name;
    }
    const noIntermediateOid = createStoreChain({ intermediateOid: false });
    const own = settings({ trustedRootCertificates: [noIntermediateOid.rootPem] }, 7);
    await expect(verifiers.verifyTransaction('q', own, signStoreJws(noIntermediateOid, payload()))).rejects.toBeInstanceOf(StoreVerificationError);
  });

  it('parses PEM lists and refuses what is not a certificate', () => {
    expect(parsePemCertificates(chain.rootPem + chain.rootPem)).toHaveLength(2);
    expect(() => parsePemCertificates('hello')).toThrow();
    expect(() => parsePemCertificates('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')).toThrow();
  });
});

describe('rails: iOS store notifications verification (for the store-notification path)', () => {
  const chain = createStoreChain();
  const verifiers = new IosStoreVerifier();
  const notification = (environment: string, appAppleId?: number) => ({
    notificationType: 'DID_RENEW',
    notificationUUID: '3f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a',
    version: '2.0',
    signedDate: Date.now(),
    data: { bundleId: BUNDLE, environment, ...(appAppleId ? { appAppleId } : {}), status: 1 },
  });

  it('accepts production notifications whatever their appAppleId when none is configured, and checks it when configured', async () => {
    const open = settings({ trustedRootCertificates: [chain.rootPem] }, 1);
    const pinned = settings({ trustedRootCertificates: [chain.rootPem], appAppleId: 42 }, 2);
    expect((await verifiers.verifyNotification('n1', open, signStoreJws(chain, notification('Production', 7)))).env).toBe('production');
    expect((await verifiers.verifyNotification('n2', pinned, signStoreJws(chain, notification('Production', 42)))).env).toBe('production');
    await expect(verifiers.verifyNotification('n2', pinned, signStoreJws(chain, notification('Production', 7)))).rejects.toBeInstanceOf(StoreVerificationError);
    // sandbox notifications carry no appAppleId check
    expect((await verifiers.verifyNotification('n2', pinned, signStoreJws(chain, notification('Sandbox')))).env).toBe('sandbox');
  });
});
