import { Injectable } from '@nestjs/common';
import { ApiError, Clock, Sql, type TenantScope } from '#platform';
import { AuditJournal } from '#audit';
import type { AuthContext } from '#keys';
import {
  type BlockMatch,
  type TrustCandidates,
  type TrustSettings,
  matchBlock,
  matchReview,
  normaliseDomain,
  normaliseEmail,
  supportReference,
} from './trust-rules.js';
import { TrustSettingsCache } from './trust-settings.cache.js';
import { TrustSettingsRepository } from './trust-settings.repository.js';
import type { TrustGateDto, TrustGateView, TrustSettingsDto, TrustSettingsView, TrustStatusQueryDto, TrustStatusView } from './trust.dto.js';

/** Where a block decision was taken (kept in its audit entry). */
export type BlockSurface = 'gate' | 'status' | 'resolve';

/** The block fields resolve adds to its answer. */
export interface BlockVerdict {
  blocked: boolean;
  blockReason: string | null;
  blockedKey: string | null;
  reference: string | null;
  supportEmail: string | null;
  blockEventId: string | null;
}

export const BLOCK_EVENT_TYPE = 'trust.blocked';
export const REVIEW_EVENT_TYPE = 'trust.review';

/**
 * The trust gate: per-project block lists and review rules (operator API), the owner status
 * and signup gate reads, and the block check resolve runs. Every block decision writes one
 * audit entry (`blk_…`), its `blockEventId`.
 */
@Injectable()
export class TrustGateService {
  constructor(
    private readonly settings: TrustSettingsRepository,
    private readonly cache: TrustSettingsCache,
    private readonly journal: AuditJournal,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async replaceSettings(projectId: string, dto: TrustSettingsDto): Promise<TrustSettingsView> {
    if (!(await this.settings.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
    const seen = new Set<string>();
    const blocks = [];
    for (const [i, rule] of dto.blocks.entries()) {
      const value = rule.kind === 'email' ? normaliseEmail(rule.value) : rule.kind === 'domain' ? normaliseDomain(rule.value) : rule.value.trim();
      if (value === '') throw ApiError.invalidParam(`blocks[${i}].value must not be empty`);
      if (seen.has(`${rule.kind}:${value}`)) throw ApiError.invalidParam(`blocks[${i}] repeats ${rule.kind}:${value}`);
      seen.add(`${rule.kind}:${value}`);
      blocks.push({ kind: rule.kind, value, reason: rule.reason });
    }
    const emailDomains = [...new Set((dto.review?.emailDomains ?? []).map(normaliseDomain).filter((d) => d !== ''))];
    const next: TrustSettings = { supportEmail: dto.supportEmail ?? null, blocks, review: { emailDomains } };
    await this.settings.replace(projectId, next, this.clock.now());
    this.cache.invalidate(projectId);
    return this.view(projectId, next);
  }

  async readSettings(projectId: string): Promise<TrustSettingsView> {
    if (!(await this.settings.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
    return this.view(projectId, await this.settings.load(projectId));
  }

  /** The owner's status (secret key): is any of these identifiers blocked? */
  async status(auth: AuthContext, query: TrustStatusQueryDto): Promise<TrustStatusView> {
    if (!query.userId && !query.email && !query.domain && !query.ip) {
      throw ApiError.missingParam('One of userId, email, domain or ip is required');
    }
    const settings = await this.cache.get(auth.projectId);
    const match = matchBlock(settings, { userIds: query.userId ? [query.userId] : [], email: query.email, domain: query.domain, ip: query.ip });
    if (!match) return { object: 'trust_status', blocked: false, blockReason: null, blockedKey: null, blockEventId: null };
    const blockEventId = await this.recordBlock(auth, match, 'status', null);
    return { object: 'trust_status', blocked: true, blockReason: match.blockReason, blockedKey: match.blockedKey, blockEventId };
  }

  /** The signup gate (either key kind): block, review or allow by email, domain and ip. */
  async gate(auth: AuthContext, body: TrustGateDto): Promise<TrustGateView> {
    if (!body.email && !body.ip && !body.domain) throw ApiError.missingParam('One of email, ip or domain is required');
    const settings = await this.cache.get(auth.projectId);
    const candidates: TrustCandidates = { email: body.email, domain: body.domain, ip: body.ip };
    const supportEmail = settings.supportEmail;
    const match = matchBlock(settings, candidates);
    if (match) {
      const blockEventId = await this.recordBlock(auth, match, 'gate', null);
      return {
        object: 'trust_gate',
        action: 'block',
        allow: false,
        band: 'high',
        blockReason: match.blockReason,
        blockedKey: match.blockedKey,
        reference: supportReference(blockEventId),
        supportEmail,
        blockEventId,
      };
    }
    const review = matchReview(settings, candidates);
    if (review) {
      const eventId = await this.record(auth, {
        eventIdPrefix: 'trv_',
        eventType: REVIEW_EVENT_TYPE,
        decision: 'review',
        reason: review.blockReason,
        customerId: null,
        details: { surface: 'gate', rule: 'email_domain' },
      });
      return {
        object: 'trust_gate',
        action: 'review',
        allow: true,
        band: 'medium',
        blockReason: review.blockReason,
        blockedKey: `domain:${review.domain}`,
        reference: supportReference(eventId),
        supportEmail,
        blockEventId: null,
      };
    }
    return {
      object: 'trust_gate',
      action: 'allow',
      allow: true,
      band: 'low',
      blockReason: null,
      blockedKey: null,
      reference: null,
      supportEmail,
      blockEventId: null,
    };
  }

  /** Resolve's check: the customer's user ids, email and the request's ip against the block lists. */
  async checkForResolve(auth: AuthContext, candidates: TrustCandidates, customerId: string | null): Promise<BlockVerdict> {
    const settings = await this.cache.get(auth.projectId);
    const match = matchBlock(settings, candidates);
    if (!match) return { blocked: false, blockReason: null, blockedKey: null, reference: null, supportEmail: settings.supportEmail, blockEventId: null };
    const blockEventId = await this.recordBlock(auth, match, 'resolve', customerId);
    return {
      blocked: true,
      blockReason: match.blockReason,
      blockedKey: match.blockedKey,
      reference: supportReference(blockEventId),
      supportEmail: settings.supportEmail,
      blockEventId,
    };
  }

  private recordBlock(auth: AuthContext, match: BlockMatch, surface: BlockSurface, customerId: string | null): Promise<string> {
    return this.record(auth, {
      eventIdPrefix: 'blk_',
      eventType: BLOCK_EVENT_TYPE,
      decision: 'blocked',
      // The rule's kind and the operator's reason; the matched value (an email, an address) stays out of the journal.
      reason: `${match.blockReason}: ${match.ruleReason}`,
      customerId,
      details: { surface, kind: match.kind },
    });
  }

  private async record(
    auth: AuthContext,
    entry: { eventIdPrefix: string; eventType: string; decision: string; reason: string; customerId: string | null; details: Record<string, unknown> },
  ): Promise<string> {
    const scope: TenantScope = auth;
    const { eventId } = await this.sql.transaction(() =>
      this.journal.append(scope, {
        eventIdPrefix: entry.eventIdPrefix,
        rail: 'trust',
        eventType: entry.eventType,
        customerId: entry.customerId,
        decision: entry.decision,
        reason: entry.reason,
        actor: `api_key:${auth.keyId}`,
        requestId: auth.requestId,
        details: { ...entry.details, keyKind: auth.kind },
      }),
    );
    return eventId;
  }

  private view(projectId: string, settings: TrustSettings): TrustSettingsView {
    return { object: 'trust_settings', projectId, supportEmail: settings.supportEmail, blocks: settings.blocks, review: settings.review };
  }
}
