import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, randomLowerAlnum, Sql } from '#platform';
import { AuditJournal } from '#audit';
import { CUSTOMER_ID_PREFIX, CustomerDirectory } from '#identity';
import { EntitlementKeyRegistry } from '../catalog/entitlement-key-registry.service.js';
import { EntitlementChangeFeed } from './entitlement-change-feed.service.js';
import { type GrantDuration, MANUAL_PRODUCT_ID, grantedValidUntil, isActiveAt, validUntilFor } from '../domain/entitlement-rules.js';
import { type EntitlementRecord, EntitlementRepository, toPublicEntitlement } from '../domain/entitlement.repository.js';
import type { EntitlementMutation } from '../domain/public-entitlement.js';

export interface GrantInput {
  entitlementKey: string;
  duration: GrantDuration;
  reason: string;
}

export interface RevokeInput {
  entitlementKey: string;
  reason: string;
}

/** Who asks: written into the audit entry. */
export interface MutationActor {
  /** `api_key:<keyId>` or `operator`. */
  actor: string;
  requestId: string | null;
}

/**
 * Why a grant or revoke was refused (the callers map it to their answer):
 * `malformed_customer_id` (not a service customer id), `unknown_customer` (no active customer
 * of that id in the scope), `not_revocable` (rail-derived, never granted, already revoked or
 * expired; the message says which).
 */
export type ManualEntitlementRefusal = 'malformed_customer_id' | 'unknown_customer' | 'not_revocable';

export class ManualEntitlementRefused extends Error {
  constructor(
    readonly refusal: ManualEntitlementRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'ManualEntitlementRefused';
  }
}

/** `<prefix><24 chars of [a-z0-9]>`, the audit journal's id format. */
const auditEventId = (prefix: string): string => `${prefix}${randomLowerAlnum(24)}`;

/**
 * Manual grant and revoke. Each call is one transaction: the manual row of (customer, key) is
 * locked (SELECT … FOR UPDATE, or created by an INSERT that concurrent inserts wait on), its
 * state changes, and the audit entry is appended in the same transaction. Concurrent calls
 * on one entitlement therefore run one after the other; each successful one leaves exactly
 * one audit entry, and the row's version counts them.
 */
@Injectable()
export class ManualEntitlementService {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly entitlements: EntitlementRepository,
    private readonly registry: EntitlementKeyRegistry,
    private readonly journal: AuditJournal,
    private readonly customers: CustomerDirectory,
    private readonly changes: EntitlementChangeFeed,
  ) {}

  async grant(scope: TenantScope, customerId: string, input: GrantInput, who: MutationActor): Promise<EntitlementMutation> {
    const developerUserIds = await this.assertCustomer(scope, customerId);
    const key = input.entitlementKey;
    return this.sql.transaction(async () => {
      const eventId = auditEventId('srv_grant_');
      // The key first, as the migration does: two first uses of a key never wait for each other's row.
      await this.registry.register(scope.projectId, [key], 'grant');
      // The state before comes with the row's lock; where a change of the same row (a revoke)
      // committed after that statement's snapshot, it is read again holding the row, so the
      // change announced is this one's alone.
      let { locked: current, tracker } = await this.changes.trackLocking(scope, customerId, key, 'manual');
      const nowMs = this.clock.nowMs();
      const now = new Date(nowMs);
      const granted = validUntilFor(input.duration, Math.floor(nowMs / 1000));
      let record: EntitlementRecord | null = null;
      if (!current) {
        record = await this.entitlements.insertIfAbsent(scope, manualWrite(customerId, key, eventId, granted), now);
        if (!record) {
          // Lost the race for the first grant: the winner has committed; lock its row and read the state with it.
          ({ locked: current, tracker } = await this.changes.trackLocking(scope, customerId, key, 'manual'));
        }
      }
      const previous = current ? { state: current.state, active: isActiveAt(current.state, current.validUntil, nowMs), validUntil: current.validUntil } : null;
      if (!record) {
        if (!current) throw new Error('manual entitlement row missing after insert conflict');
        const validUntil = grantedValidUntil(previous, granted);
        record = await this.entitlements.update(scope, manualWrite(customerId, key, eventId, validUntil), now);
      }
      await this.journal.append(scope, {
        eventId,
        rail: 'manual',
        eventType: 'entitlement.granted_manually',
        customerId,
        decision: 'applied',
        reason: input.reason,
        actor: who.actor,
        requestId: who.requestId,
        details: {
          action: 'grant',
          entitlementKey: key,
          duration: input.duration,
          validUntil: record.validUntil,
          previousState: previous ? (previous.active ? 'active' : previous.state === 'active' ? 'expired' : previous.state) : null,
          version: record.version,
        },
      });
      await tracker.publish(
        () => 'grant',
        () => [manualEvent('entitlement.granted_manually', customerId, key, record.validUntil, input.reason, eventId)],
        { written: [{ customerId, entitlement: toPublicEntitlement(record, nowMs) }], developerUserIds },
      );
      return this.mutation(scope, 'grant', customerId, record, eventId, nowMs);
    });
  }

  async revoke(scope: TenantScope, customerId: string, input: RevokeInput, who: MutationActor): Promise<EntitlementMutation> {
    const developerUserIds = await this.assertCustomer(scope, customerId);
    const key = input.entitlementKey;
    return this.sql.transaction(async () => {
      const eventId = auditEventId('srv_revoke_');
      // The state before with the row's lock (see grant).
      const { locked: current, tracker } = await this.changes.trackLocking(scope, customerId, key, 'manual');
      const nowMs = this.clock.nowMs();
      if (!current || !isActiveAt(current.state, current.validUntil, nowMs)) {
        throw await this.whyNotRevocable(scope, customerId, key, current, nowMs);
      }
      const record = await this.entitlements.update(
        scope,
        { ...manualWrite(customerId, key, current.subscriptionId, current.validUntil), state: 'revoked', lastEventId: eventId },
        new Date(nowMs),
      );
      await this.journal.append(scope, {
        eventId,
        rail: 'manual',
        eventType: 'entitlement.revoked_manually',
        customerId,
        decision: 'applied',
        reason: input.reason,
        actor: who.actor,
        requestId: who.requestId,
        details: { action: 'revoke', entitlementKey: key, validUntil: record.validUntil, previousState: 'active', version: record.version },
      });
      await tracker.publish(
        () => 'revoke',
        () => [manualEvent('entitlement.revoked_manually', customerId, key, record.validUntil, input.reason, eventId)],
        { written: [{ customerId, entitlement: toPublicEntitlement(record, nowMs) }], developerUserIds },
      );
      return this.mutation(scope, 'revoke', customerId, record, eventId, nowMs);
    });
  }

  /**
   * Refuses an id that names no active customer of the scope. Where the change is tracked, the
   * same one statement reads the customer's profile, whose developer user id the change's
   * events carry (the sink need not read it again); answers it then.
   */
  private async assertCustomer(scope: TenantScope, customerId: string): Promise<ReadonlyMap<string, string | null> | undefined> {
    if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) {
      throw new ManualEntitlementRefused('malformed_customer_id', `customerId must start with ${CUSTOMER_ID_PREFIX}`);
    }
    const unknown = () => new ManualEntitlementRefused('unknown_customer', `No customer ${customerId} in this project and environment`);
    if (await this.changes.tracks(scope)) {
      const profile = await this.customers.profile(scope, customerId);
      if (!profile) throw unknown();
      return new Map([[customerId, profile.developerUserIds[0] ?? null]]);
    }
    if (!(await this.customers.isActiveCustomer(scope, customerId))) throw unknown();
    return undefined;
  }

  /** The refusal of a revoke that cannot apply, saying why. */
  private async whyNotRevocable(
    scope: TenantScope,
    customerId: string,
    key: string,
    manual: EntitlementRecord | null,
    nowMs: number,
  ): Promise<ManualEntitlementRefused> {
    const railBacked = await this.entitlements.findActiveOfKey(scope, customerId, key, 'manual', new Date(nowMs));
    if (railBacked.length > 0) {
      return new ManualEntitlementRefused(
        'not_revocable',
        `entitlementKey: ${key} is derived from the ${railBacked[0].rail} rail and cannot be revoked here; cancel or refund on the rail instead`,
      );
    }
    if (!manual) return new ManualEntitlementRefused('not_revocable', `entitlementKey: ${key} was never granted to this customer`);
    if (manual.state === 'revoked') return new ManualEntitlementRefused('not_revocable', `entitlementKey: ${key} is already revoked`);
    const ended = manual.validUntil === null ? '' : ` at ${new Date(manual.validUntil * 1000).toISOString()}`;
    return new ManualEntitlementRefused('not_revocable', `entitlementKey: ${key} already expired${ended}; there is nothing to revoke`);
  }

  private mutation(
    scope: TenantScope,
    action: 'grant' | 'revoke',
    customerId: string,
    record: EntitlementRecord,
    eventId: string,
    nowMs: number,
  ): EntitlementMutation {
    return {
      object: 'entitlement_mutation',
      action,
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      entitlement: toPublicEntitlement(record, nowMs),
      env: scope.env,
      auditEventId: eventId,
    };
  }
}

/** The entitlement.*_manually event (developerUserId is added by the recorder). */
function manualEvent(type: string, customerId: string, key: string, validUntil: number | null, reason: string, auditEventId: string) {
  return { type, data: { serviceCustomerId: customerId, entitlementKey: key, validUntil, reason, auditEventId } };
}

function manualWrite(customerId: string, key: string, grantEventId: string, validUntil: number | null) {
  return {
    customerId,
    key,
    rail: 'manual' as const,
    productId: MANUAL_PRODUCT_ID,
    subscriptionId: grantEventId,
    state: 'active' as const,
    validUntil,
    lastEventId: grantEventId,
  };
}
