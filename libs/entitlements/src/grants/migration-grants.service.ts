import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, randomLowerAlnum } from '#platform';
import { AuditJournal } from '#audit';
import { EntitlementKeyRegistry } from '../catalog/entitlement-key-registry.service.js';
import { EntitlementRepository } from '../domain/entitlement.repository.js';
import { EntitlementChangeFeed } from './entitlement-change-feed.service.js';

/** Who asks and why: written into every audit entry of the grants. */
export interface MigrationGrantContext {
  /** `api_key:<keyId>`. */
  actor: string;
  requestId: string | null;
  /** Human sentence naming the migration. */
  reason: string;
}

export interface MigrationGrantOutcome {
  /** Pairs granted by this call, each with its audit entry. */
  granted: { customerId: string; key: string; eventId: string }[];
  /** Pairs that already had a manual entitlement (any state): left untouched, no audit entry. */
  alreadyPresent: number;
}

/** Audit event ids of migration grants: `srv_migrate_<24 chars>`. */
const EVENT_PREFIX = 'srv_migrate_';

/**
 * Bulk user migration's use cases in the entitlement model, in the caller's transaction and
 * set-based: the asserted lifetime manual grants (one audit entry per grant made) and the
 * registration of asserted keys in the project's key registry (`registeredBy: migration`).
 * Converges: a (customer, key) that already has a manual entitlement is never granted again,
 * so a re-run writes neither a row nor an audit entry.
 */
@Injectable()
export class MigrationGrants {
  constructor(
    private readonly entitlements: EntitlementRepository,
    private readonly registry: EntitlementKeyRegistry,
    private readonly journal: AuditJournal,
    private readonly clock: Clock,
    private readonly changes: EntitlementChangeFeed,
  ) {}

  /** Registers asserted keys; returns the keys this call registered (first registration wins). */
  registerKeys(projectId: string, keys: readonly string[]): Promise<string[]> {
    return this.registry.register(projectId, keys, 'migration');
  }

  async grantLifetime(
    scope: TenantScope,
    pairs: readonly { customerId: string; key: string }[],
    context: MigrationGrantContext,
  ): Promise<MigrationGrantOutcome> {
    const unique = new Map<string, { customerId: string; key: string; eventId: string }>();
    for (const pair of pairs) {
      const id = `${pair.customerId}\u0000${pair.key}`;
      if (!unique.has(id)) unique.set(id, { ...pair, eventId: `${EVENT_PREFIX}${randomLowerAlnum(24)}` });
    }
    const grants = [...unique.values()];
    const tracker = this.changes.attached
      ? await this.changes.track(
          scope,
          grants.map((g) => g.customerId),
        )
      : null;
    const granted = await this.entitlements.insertManualLifetimeIfAbsent(scope, grants, this.clock.now());
    await this.journal.appendMany(
      scope,
      granted.map((grant) => ({
        eventId: grant.eventId,
        rail: 'manual',
        eventType: 'entitlement.granted_by_migration',
        customerId: grant.customerId,
        decision: 'applied',
        reason: context.reason,
        actor: context.actor,
        requestId: context.requestId,
        details: { action: 'grant', entitlementKey: grant.key, duration: 'lifetime', validUntil: null, previousState: null, version: 1, source: 'migration' },
      })),
    );
    if (tracker && granted.length > 0) {
      await tracker.publish(
        () => 'migration',
        (customerId) =>
          granted
            .filter((g) => g.customerId === customerId)
            .map((g) => ({
              type: 'entitlement.granted_manually',
              data: { serviceCustomerId: customerId, entitlementKey: g.key, validUntil: null, reason: context.reason, auditEventId: g.eventId },
            })),
      );
    }
    return { granted, alreadyPresent: grants.length - granted.length };
  }
}
