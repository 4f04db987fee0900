import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type TenantScope } from '#platform';
import { CustomerDirectory, IdentifyService, IdTokenVerifier, type VerifiedIdentity } from '#identity';
import { EntitlementReadService } from '#entitlements';
import type { AuthContext } from '#keys';
import { DeviceBindingRepository } from '../bindings/device-binding.repository.js';
import { trustTier } from '../domain/trust-tier.js';
import type { ResolveDto, ResolvedUser, ResolveResultView } from './resolve.dto.js';

/** Trust-tier resolve: server-derived and fail-closed. */
@Injectable()
export class ResolveService {
  constructor(
    private readonly verifier: IdTokenVerifier,
    private readonly identify: IdentifyService,
    private readonly directory: CustomerDirectory,
    private readonly bindings: DeviceBindingRepository,
    private readonly entitlements: EntitlementReadService,
    private readonly clock: Clock,
  ) {}

  async resolve(auth: AuthContext, dto: ResolveDto): Promise<ResolveResultView> {
    const anonymousId = dto.anonymousId ?? null;
    const tokenPair = Boolean(dto.userId && dto.idToken);
    // A secret key is the developer's own server: its word on userId is recognition enough
    // ("server-to-server calls may omit" anonymousId). Never more than tier 1.
    const serverAsserted = auth.kind === 'secret' && Boolean(dto.userId);
    if (!anonymousId && !tokenPair && !serverAsserted) {
      throw ApiError.invalidParam('No identity to resolve: anonymousId is required unless userId and idToken are supplied (or userId with a secret key)');
    }
    const passkeyAvailable = dto.passkeyAvailable === true;

    // An invalid or expired token never errors and never elevates.
    const verified = tokenPair ? await this.verifier.verifyFor(auth.projectId, dto.idToken as string, dto.userId as string) : null;
    if (verified) return this.authenticated(auth, dto.userId as string, verified, anonymousId, passkeyAvailable);
    if (anonymousId) return this.recognize(auth, anonymousId, passkeyAvailable);
    if (serverAsserted) return this.recognizeUser(auth, dto.userId as string);
    return this.result(trustTier({ verified: false, knownUser: false, deviceVerifiedAtMs: null, passkeyAvailable, nowMs: this.clock.nowMs() }), null, '');
  }

  private async authenticated(
    scope: TenantScope,
    userId: string,
    claims: VerifiedIdentity,
    anonymousId: string | null,
    passkeyAvailable: boolean,
  ): Promise<ResolveResultView> {
    const customerId = await this.identify.ensureVerifiedCustomer(scope, userId, { email: claims.email, givenName: claims.givenName });
    if (anonymousId) await this.bindings.record(scope, { anonymousId, customerId, userId, verifiedAt: this.clock.now() });
    const [profile, entitlements] = await Promise.all([this.directory.profile(scope, customerId), this.entitlements.listActive(scope, customerId)]);
    const user: ResolvedUser = { id: userId };
    const email = claims.email ?? profile?.email ?? null;
    const firstName = claims.givenName ?? profile?.firstName ?? null;
    if (email) user.email = email;
    if (firstName) user.firstName = firstName;
    const decision = trustTier({ verified: true, knownUser: true, deviceVerifiedAtMs: null, passkeyAvailable, nowMs: this.clock.nowMs() });
    // The clients read the active entitlement keys as strings.
    const keys = entitlements.filter((entitlement) => entitlement.isActive).map((entitlement) => entitlement.key);
    return { ...this.result(decision, user, anonymousId ?? ''), entitlements: keys };
  }

  /**
   * Secret key, userId, no device: a known developer user id of the key's project and
   * environment is tier 1; anything else tier 0. No device binding is read or written, so
   * this path never reaches tier 2.
   */
  private async recognizeUser(scope: TenantScope, userId: string): Promise<ResolveResultView> {
    const customerId = await this.directory.findCustomerId(scope, { userId });
    const profile = customerId ? await this.directory.profile(scope, customerId) : null;
    const knownUser = profile !== null && profile.developerUserIds.includes(userId);
    const decision = trustTier({ verified: false, knownUser, deviceVerifiedAtMs: null, passkeyAvailable: false, nowMs: this.clock.nowMs() });
    let user: ResolvedUser | null = null;
    if (knownUser) {
      user = { id: userId };
      if (profile.email) user.email = profile.email;
    }
    return this.result(decision, user, '');
  }

  /** Recognition by the device: its tier-3 binding first, then the alias graph. */
  private async recognize(scope: TenantScope, anonymousId: string, passkeyAvailable: boolean): Promise<ResolveResultView> {
    // A binding counts only while its customer is active: identity reads a forgotten customer's profile as null.
    const bound = await this.bindings.find(scope, anonymousId);
    const boundProfile = bound ? await this.directory.profile(scope, bound.customerId) : null;
    const binding = boundProfile ? bound : null;
    const customerId = binding?.customerId ?? (await this.directory.findCustomerId(scope, { anonymousId }));
    const profile = binding ? boundProfile : customerId ? await this.directory.profile(scope, customerId) : null;
    const developerIds = profile?.developerUserIds ?? [];
    const knownUser = developerIds.length > 0;
    const decision = trustTier({
      verified: false,
      knownUser,
      deviceVerifiedAtMs: binding ? binding.verifiedAt.getTime() : null,
      passkeyAvailable,
      nowMs: this.clock.nowMs(),
    });
    let user: ResolvedUser | null = null;
    if (decision.trustTier > 0 && profile) {
      user = { id: binding && developerIds.includes(binding.userId) ? binding.userId : developerIds[0] };
      if (profile.email) user.email = profile.email;
    }
    return this.result(decision, user, anonymousId);
  }

  private result(decision: ReturnType<typeof trustTier>, user: ResolvedUser | null, anonymousId: string): ResolveResultView {
    return {
      object: 'resolve_result',
      status: decision.status,
      trustTier: decision.trustTier,
      user,
      entitlements: null,
      recommendedAction: decision.recommendedAction,
      anonymousId,
    };
  }
}
