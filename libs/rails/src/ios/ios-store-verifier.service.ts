import { Injectable } from '@nestjs/common';
import {
  Environment,
  type JWSRenewalInfoDecodedPayload,
  type JWSTransactionDecodedPayload,
  type ResponseBodyV2DecodedPayload,
  SignedDataVerifier,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import type { Env } from '#platform';
import type { RailSettingsRecord } from '../model/rail-settings.repository.js';
import { appleRootCertificates } from './apple-root-certificates.js';
import { type IosStoreSettings, parsePemCertificates } from './ios-store-settings.js';

/**
 * The store library's verifier with online checks off (no network: no OCSP, chain dates
 * checked at the payload's signedDate, as the library does offline). The library insists on
 * an appAppleId for production; when the project has not configured one, production
 * notifications are accepted whatever their appAppleId (bundle id and chain still checked).
 */
export class StoreSignedDataVerifier extends SignedDataVerifier {
  constructor(roots: Buffer[], environment: Environment, bundleId: string, appAppleId: number | undefined) {
    super(roots, false, environment, bundleId, appAppleId ?? 0);
    this.appAppleId = appAppleId;
  }

  protected override verifyNotification(bundleId?: string, appAppleId?: number, environment?: string): void {
    super.verifyNotification(bundleId, this.appAppleId === undefined ? undefined : appAppleId, environment);
  }

  /** The trusted roots in use (for tests and diagnostics). */
  get trustedRoots(): readonly Buffer[] {
    return this.rootCertificates.map((cert) => cert.raw);
  }
}

/** Verification failed under both environments; `reasons` says why under each. */
export class StoreVerificationError extends Error {
  constructor(readonly reasons: Record<Env, string>) {
    super(`production: ${reasons.production}; sandbox: ${reasons.sandbox}`);
    this.name = 'StoreVerificationError';
  }
}

export interface Verified<T> {
  env: Env;
  payload: T;
}

const STATUS_NAMES: Record<number, string> = {
  [VerificationStatus.OK]: 'ok',
  [VerificationStatus.VERIFICATION_FAILURE]: 'signature or certificate chain failed verification',
  [VerificationStatus.RETRYABLE_VERIFICATION_FAILURE]: 'retryable verification failure',
  [VerificationStatus.INVALID_APP_IDENTIFIER]: 'bundle id (or app Apple id) does not match the rail settings',
  [VerificationStatus.INVALID_ENVIRONMENT]: 'environment does not match',
  [VerificationStatus.INVALID_CHAIN_LENGTH]: 'x5c chain does not hold three certificates',
  [VerificationStatus.INVALID_CERTIFICATE]: 'x5c certificate does not parse',
  [VerificationStatus.FAILURE]: 'not a signed payload of the expected type',
};

export function describeVerificationFailure(err: unknown): string {
  if (err instanceof VerificationException) return STATUS_NAMES[err.status] ?? `verification status ${err.status}`;
  return err instanceof Error ? err.message : String(err);
}

const MAX_CACHED = 1000;

/**
 * Verifies the iOS store's signed data (transactions, renewal info, notifications) for a
 * project: trusted roots from the project's iOS rail settings, else the store's own roots
 * shipped with the service; bundle id from the settings; appAppleId in production when
 * configured; production first, then sandbox. Verifiers are cached per (project, env,
 * settings version), so a settings change takes effect on the next call.
 */
@Injectable()
export class IosStoreVerifier {
  private readonly cache = new Map<string, StoreSignedDataVerifier>();

  /** The verifier of one environment (built once per settings version). */
  verifierFor(projectId: string, rail: RailSettingsRecord<IosStoreSettings>, env: Env): StoreSignedDataVerifier {
    const key = `${projectId}|${env}|${rail.version}`;
    let verifier = this.cache.get(key);
    if (!verifier) {
      for (const cached of this.cache.keys()) if (cached.startsWith(`${projectId}|${env}|`)) this.cache.delete(cached);
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
      const settings = rail.settings;
      const roots = settings.trustedRootCertificates?.length ? settings.trustedRootCertificates.flatMap(parsePemCertificates) : appleRootCertificates();
      verifier = new StoreSignedDataVerifier(
        roots,
        env === 'production' ? Environment.PRODUCTION : Environment.SANDBOX,
        settings.bundleId,
        env === 'production' ? settings.appAppleId : undefined,
      );
      this.cache.set(key, verifier);
    }
    return verifier;
  }

  verifyTransaction(projectId: string, rail: RailSettingsRecord<IosStoreSettings>, jws: string): Promise<Verified<JWSTransactionDecodedPayload>> {
    return this.bothEnvironments(projectId, rail, (verifier) => verifier.verifyAndDecodeTransaction(jws));
  }

  verifyNotification(projectId: string, rail: RailSettingsRecord<IosStoreSettings>, jws: string): Promise<Verified<ResponseBodyV2DecodedPayload>> {
    return this.bothEnvironments(projectId, rail, (verifier) => verifier.verifyAndDecodeNotification(jws));
  }

  /** Renewal info of a known environment (that of the transaction or notification it came with). */
  verifyRenewalInfo(projectId: string, rail: RailSettingsRecord<IosStoreSettings>, env: Env, jws: string): Promise<JWSRenewalInfoDecodedPayload> {
    return this.verifierFor(projectId, rail, env).verifyAndDecodeRenewalInfo(jws);
  }

  /** Transaction of a known environment (the one inside a verified notification). */
  verifyTransactionIn(projectId: string, rail: RailSettingsRecord<IosStoreSettings>, env: Env, jws: string): Promise<JWSTransactionDecodedPayload> {
    return this.verifierFor(projectId, rail, env).verifyAndDecodeTransaction(jws);
  }

  private async bothEnvironments<T>(
    projectId: string,
    rail: RailSettingsRecord<IosStoreSettings>,
    verify: (verifier: StoreSignedDataVerifier) => Promise<T>,
  ): Promise<Verified<T>> {
    const reasons = {} as Record<Env, string>;
    for (const env of ['production', 'sandbox'] as const) {
      try {
        return { env, payload: await verify(this.verifierFor(projectId, rail, env)) };
      } catch (err) {
        reasons[env] = describeVerificationFailure(err);
      }
    }
    throw new StoreVerificationError(reasons);
  }
}
