import { Injectable } from '@nestjs/common';
import { ApiError, Clock, RetryTransaction, type TenantScope, Sql } from '#platform';
import type { AuthContext } from '#keys';
import { IdentityRepository, type Assurance } from '../customers/identity.repository.js';
import { decideOwner } from '../domain/alias-graph-rules.js';
import { ALIAS_TYPES } from '../domain/identifier-rules.js';
import { newCustomerId, newMergeReviewId } from '../domain/ids.js';
import { mergeTraits, sanitizeTraits, type Traits } from '../domain/traits.js';
import { IdTokenVerifier, type VerifiedIdentity } from '../tokens/id-token-verifier.service.js';
import type { IdentifyDto } from './identify.dto.js';
import type { AliasResultView, LinkedId } from './alias-result.view.js';
import { IdentifyVelocityLimiter } from './velocity-limiter.js';
import { LinkHooks } from './link-hooks.js';

interface LinkRequest {
  userId: string;
  anonymousId: string | null;
  email: string | null;
  firstName: string | null;
  traits: Traits;
  appAccountToken: string | null;
  verified: boolean;
}

interface LinkOutcome {
  customerId: string;
  linked: LinkedId[];
  mergePending: boolean;
}

/** Identify: links a developer user id and an anonymous id in the alias graph. */
@Injectable()
export class IdentifyService {
  constructor(
    private readonly sql: Sql,
    private readonly repository: IdentityRepository,
    private readonly verifier: IdTokenVerifier,
    private readonly velocity: IdentifyVelocityLimiter,
    private readonly clock: Clock,
    private readonly linkHooks: LinkHooks,
  ) {}

  async identify(auth: AuthContext, dto: IdentifyDto): Promise<AliasResultView> {
    // Missing ids are invalid_param_value here (the spec's code for "missing or malformed").
    if (dto.userId === undefined || dto.userId === null) throw ApiError.invalidParam('userId is required');
    if (dto.anonymousId === undefined || dto.anonymousId === null) throw ApiError.invalidParam('anonymousId is required');

    const velocity = await this.velocity.hit(auth, dto.userId);
    if (!velocity.allowed) {
      throw ApiError.rateLimited(velocity.retryAfterMs, 0, 'More than 30 identify calls for this userId within 60 seconds; retry later');
    }

    let identity: VerifiedIdentity | null = null;
    if (dto.idToken !== undefined && dto.idToken !== null) {
      identity = await this.verifier.verifyFor(auth.projectId, dto.idToken, dto.userId);
      if (!identity) throw ApiError.authentication('identity_token_invalid', 'idToken failed verification (signature, issuer, audience, expiry or subject)');
    }

    const outcome = await this.link(auth, {
      userId: dto.userId,
      anonymousId: dto.anonymousId,
      email: identity?.email ?? dto.email ?? null,
      firstName: identity?.givenName ?? null,
      traits: sanitizeTraits(dto.traits),
      appAccountToken: dto.appAccountToken ?? null,
      verified: identity !== null,
    });
    return {
      object: 'alias_result',
      serviceCustomerId: outcome.customerId,
      crossdeckCustomerId: outcome.customerId,
      linked: outcome.linked,
      mergePending: outcome.mergePending,
      env: auth.env,
    };
  }

  /**
   * The customer of a cryptographically verified user (resolve, tier 3): found by the
   * developer id, or created with a verified link. Claims update email and first name.
   */
  async ensureVerifiedCustomer(scope: TenantScope, userId: string, claims: { email?: string; givenName?: string }): Promise<string> {
    const outcome = await this.link(scope, {
      userId,
      anonymousId: null,
      email: claims.email ?? null,
      firstName: claims.givenName ?? null,
      traits: {},
      appAccountToken: null,
      verified: true,
    });
    return outcome.customerId;
  }

  private link(scope: TenantScope, request: LinkRequest): Promise<LinkOutcome> {
    return this.sql.transaction(
      async () => {
        const outcome = await this.linkOnce(scope, request);
        if (request.anonymousId !== null) {
          await this.linkHooks.runAll(scope, { customerId: outcome.customerId, anonymousId: request.anonymousId, linkedAtMs: this.clock.nowMs() });
        }
        return outcome;
      },
      { retry: true },
    );
  }

  private async linkOnce(scope: TenantScope, request: LinkRequest): Promise<LinkOutcome> {
    const now = this.clock.now();
    const assurance: Assurance = request.verified ? 'verified' : 'self_asserted';
    const developerNode = { type: ALIAS_TYPES.developer, value: request.userId };
    const anonymousNode = request.anonymousId !== null ? { type: ALIAS_TYPES.anonymous, value: request.anonymousId } : null;
    const nodes = anonymousNode ? [developerNode, anonymousNode] : [developerNode];

    const hits = await this.repository.findAliases(scope, nodes);
    // Nodes of a forgotten customer are unknown: free them so that they can be linked afresh.
    await this.repository.releaseForgottenAliases(scope, hits);
    const developerOwner = hits.find((h) => h.type === developerNode.type && !h.forgotten)?.customerId ?? null;
    const anonymousOwner = anonymousNode ? (hits.find((h) => h.type === anonymousNode.type && !h.forgotten)?.customerId ?? null) : null;

    let customerId: string;
    let mergePending = false;
    const linked: LinkedId[] = [{ type: 'developer', id: request.userId }];
    if (anonymousNode) linked.push({ type: 'anonymous', id: anonymousNode.value });

    // The developer user id is the primary id: its customer wins over the anonymous id's.
    const decision = decideOwner(developerOwner, anonymousOwner);
    if (decision.kind === 'create') {
      customerId = newCustomerId();
      await this.repository.insertCustomer(scope, customerId, now);
      await this.lockActive(scope, customerId);
      for (const node of nodes) await this.repository.insertAlias(scope, node, customerId, assurance, now);
    } else if (decision.kind === 'review') {
      // The anonymous id stays with its customer; the conflict is queued once.
      customerId = decision.customerId;
      mergePending = true;
      linked.pop();
      await this.lockActive(scope, customerId);
      await this.repository.queueMergeReview(
        scope,
        {
          id: newMergeReviewId(),
          developerUserId: request.userId,
          anonymousId: anonymousNode!.value,
          canonicalCustomerId: decision.customerId,
          otherCustomerId: decision.otherCustomerId,
        },
        now,
      );
    } else {
      customerId = decision.customerId;
      await this.lockActive(scope, customerId);
      if (!developerOwner) await this.repository.insertAlias(scope, developerNode, customerId, assurance, now);
      if (anonymousNode && !anonymousOwner) await this.repository.insertAlias(scope, anonymousNode, customerId, assurance, now);
    }

    if (request.verified) {
      await this.repository.markVerified(scope, customerId, mergePending ? [developerNode] : nodes, now);
    }
    if (request.appAccountToken) {
      // Binds the iOS rail; a token already bound (to this or another customer) is left as it is.
      await this.repository.insertAliasIfAbsent(scope, { type: ALIAS_TYPES.iosAppAccountToken, value: request.appAccountToken }, customerId, assurance, now);
    }
    await this.updateProfile(scope, customerId, request, now);
    return { customerId, linked, mergePending };
  }

  /** Locks the customer row; a customer forgotten meanwhile restarts the transaction (its ids are then unknown). */
  private async lockActive(scope: TenantScope, customerId: string): Promise<void> {
    const row = await this.repository.lockCustomer(scope, customerId);
    if (!row || row.forgottenAt) throw new RetryTransaction('customer forgotten concurrently');
  }

  private async updateProfile(scope: TenantScope, customerId: string, request: LinkRequest, now: Date): Promise<void> {
    const hasTraits = Object.keys(request.traits).length > 0;
    if (!hasTraits && request.email === null && request.firstName === null) return;
    const row = await this.repository.lockCustomer(scope, customerId);
    if (!row) return;
    await this.repository.updateProfile(
      scope,
      customerId,
      {
        email: request.email ?? row.email,
        firstName: request.firstName ?? row.firstName,
        traits: hasTraits ? mergeTraits(row.traits, request.traits) : row.traits,
      },
      now,
    );
  }
}
