import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, randomLowerAlnum, Sql } from '#platform';
import { AuditJournal } from '#audit';
import { CUSTOMER_ID_PREFIX, CustomerDirectory } from '#identity';
import { EntitlementKeyRegistry } from '../catalog/entitlement-key-registry.service.js';
import { MANUAL_PRODUCT_ID, grantedValidUntil, isActiveAt, validUntilFor } from '../domain/entitlement-rules.js';
import { type EntitlementRecord, EntitlementRepository, type EntitlementWrite, toPublicEntitlement } from '../domain/entitlement.repository.js';
import type { EntitlementMutation, PublicEntitlement } from '../domain/public-entitlement.js';
import {
  type CustomerEntitlementChange,
  type EntitlementChange,
  type EntitlementChangeSink,
  type EntitlementChangeResult,
  type Expiry,
  type ManualGrant,
  type ManualRevoke,
  type MigrationGrant,
  type MigrationGrantOutcome,
  type PassedEntitlement,
  type RailFold,
  type RailStateWrite,
  ManualEntitlementRefused,
} from './entitlement-change.js';
import { EntitlementChangeFeed } from './entitlement-change-feed.service.js';

/** `<prefix><24 chars of [a-z0-9]>`, the audit journal's id format. */
const auditEventId = (prefix: string): string => `${prefix}${randomLowerAlnum(24)}`;

/** Audit event ids of migration grants: `srv_migrate_<24 chars>`. */
const MIGRATION_EVENT_PREFIX = 'srv_migrate_';

/**
 * The one way any context changes an entitlement: `apply(scope, change)`. Inside the caller's
 * transaction it locks what the change needs, reads the state before (only where a sink wants
 * the scope), writes the rows, appends the audit entries and hands before, after and the
 * change's events to the attached sink (outbound webhooks), which records them in the same
 * transaction. How the statements are saved (the state read with the row's lock, the state
 * after derived from the rows written, the developer user id read with the customer check) is
 * the writer's business alone.
 *
 * A manual grant or revoke checks the customer first, then runs in a transaction of its own
 * (a savepoint inside the caller's).
 */
@Injectable()
export class EntitlementWriter {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly entitlements: EntitlementRepository,
    private readonly registry: EntitlementKeyRegistry,
    private readonly journal: AuditJournal,
    private readonly customers: CustomerDirectory,
    private readonly feed: EntitlementChangeFeed,
  ) {}

  /** Registers the sink that hears every change (the context that owns it calls this at start). */
  attach(sink: EntitlementChangeSink): void {
    this.feed.attach(sink);
  }

  apply<C extends EntitlementChange>(scope: TenantScope, change: C): Promise<EntitlementChangeResult<C>>;
  async apply(scope: TenantScope, change: EntitlementChange): Promise<EntitlementChangeResult<EntitlementChange>> {
    switch (change.kind) {
      case 'manual_grant':
        return this.grant(scope, change);
      case 'manual_revoke':
        return this.revoke(scope, change);
      case 'migration_grant':
        return this.migrationGrant(scope, change);
      case 'rail_state':
        return this.railState(scope, change);
      case 'fold':
        return this.fold(scope, change);
      case 'expiry':
        return this.expiry(scope, change);
    }
  }

  private async grant(scope: TenantScope, change: ManualGrant): Promise<EntitlementMutation> {
    const { customerId, entitlementKey: key } = change;
    const developerUserIds = await this.assertCustomer(scope, customerId);
    return this.sql.transaction(async () => {
      const eventId = auditEventId('srv_grant_');
      // The key first, as the migration does: two first uses of a key never wait for each other's row.
      await this.registry.register(scope.projectId, [key], 'grant');
      // The state before comes with the row's lock; where a change of the same row (a revoke)
      // committed after that statement's snapshot, it is read again holding the row, so the
      // change announced is this one's alone.
      let { locked: current, tracker } = await this.feed.trackLocking(scope, customerId, key, 'manual');
      const nowMs = this.clock.nowMs();
      const now = new Date(nowMs);
      const granted = validUntilFor(change.duration, Math.floor(nowMs / 1000));
      let record: EntitlementRecord | null = null;
      if (!current) {
        record = await this.entitlements.insertIfAbsent(scope, manualWrite(customerId, key, eventId, granted), now);
        if (!record) {
          // Lost the race for the first grant: the winner has committed; lock its row and read the state with it.
          ({ locked: current, tracker } = await this.feed.trackLocking(scope, customerId, key, 'manual'));
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
        reason: change.reason,
        actor: change.who.actor,
        requestId: change.who.requestId,
        details: {
          action: 'grant',
          entitlementKey: key,
          duration: change.duration,
          validUntil: record.validUntil,
          previousState: previous ? (previous.active ? 'active' : previous.state === 'active' ? 'expired' : previous.state) : null,
          version: record.version,
        },
      });
      await tracker.publish(
        () => 'grant',
        () => [manualEvent('entitlement.granted_manually', customerId, key, record.validUntil, change.reason, eventId)],
        { written: [{ customerId, entitlement: toPublicEntitlement(record, nowMs) }], developerUserIds },
      );
      return mutation(scope, 'grant', customerId, record, eventId, nowMs);
    });
  }

  private async revoke(scope: TenantScope, change: ManualRevoke): Promise<EntitlementMutation> {
    const { customerId, entitlementKey: key } = change;
    const developerUserIds = await this.assertCustomer(scope, customerId);
    return this.sql.transaction(async () => {
      const eventId = auditEventId('srv_revoke_');
      // The state before with the row's lock (see grant).
      const { locked: current, tracker } = await this.feed.trackLocking(scope, customerId, key, 'manual');
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
        reason: change.reason,
        actor: change.who.actor,
        requestId: change.who.requestId,
        details: { action: 'revoke', entitlementKey: key, validUntil: record.validUntil, previousState: 'active', version: record.version },
      });
      await tracker.publish(
        () => 'revoke',
        () => [manualEvent('entitlement.revoked_manually', customerId, key, record.validUntil, change.reason, eventId)],
        { written: [{ customerId, entitlement: toPublicEntitlement(record, nowMs) }], developerUserIds },
      );
      return mutation(scope, 'revoke', customerId, record, eventId, nowMs);
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
    if (await this.feed.tracks(scope)) {
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

  /**
   * Set-based lifetime grants, in the caller's transaction: one audit entry per grant made. A
   * (customer, key) that already has a manual row is never granted again, so a re-run writes
   * neither a row nor an audit entry.
   */
  private async migrationGrant(scope: TenantScope, change: MigrationGrant): Promise<MigrationGrantOutcome> {
    const unique = new Map<string, { customerId: string; key: string; eventId: string }>();
    for (const pair of change.pairs) {
      const id = `${pair.customerId}\u0000${pair.key}`;
      if (!unique.has(id)) unique.set(id, { ...pair, eventId: auditEventId(MIGRATION_EVENT_PREFIX) });
    }
    const grants = [...unique.values()];
    const tracker = this.feed.attached
      ? await this.feed.track(
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
        reason: change.reason,
        actor: change.who.actor,
        requestId: change.who.requestId,
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
              data: { serviceCustomerId: customerId, entitlementKey: g.key, validUntil: null, reason: change.reason, auditEventId: g.eventId },
            })),
      );
    }
    return { granted, alreadyPresent: grants.length - granted.length };
  }

  /**
   * A rail's rows, in one statement, in the caller's transaction (the rail serialises writers
   * of a customer's rows on a rail before it calls): the state before is read first where a
   * sink wants it, the state after is derived from the rows written, then the rail's audit
   * entry is appended.
   */
  private async railState(scope: TenantScope, change: RailStateWrite): Promise<PublicEntitlement[]> {
    const customers = [...new Set([change.customerId, change.previousCustomerId ?? change.customerId])].sort();
    const tracker = await this.feed.track(scope, customers);
    const nowMs = this.clock.nowMs();
    const records = await this.entitlements.upsertMany(
      scope,
      change.rows.map((row) => ({
        customerId: row.customerId,
        key: row.entitlementKey,
        rail: change.rail,
        productId: row.productId,
        subscriptionId: row.subscriptionId,
        state: row.state,
        validUntil: row.validUntil,
        lastEventId: row.auditEventId,
      })),
      new Date(nowMs),
    );
    const wrote = records.map((record) => toPublicEntitlement(record, nowMs));
    await tracker.publish(
      (_key, kind) => change.causes[kind],
      (customerId) => (customerId === change.customerId ? [...change.events] : []),
      {
        written: change.rows.map((row, i) => ({ customerId: row.customerId, entitlement: wrote[i] })),
        // A customer the event's resolution created rail-only has no developer user id: the sink need not read it.
        ...(change.railOnlyCustomer ? { developerUserIds: new Map([[change.customerId, null]]) } : {}),
      },
    );
    await this.journal.append(scope, change.audit);
    return wrote;
  }

  /** Moves the rail-derived rows of one customer to another: the first customer's keys end (cause `revoke`), the other's start or extend (`purchase`). */
  private async fold(scope: TenantScope, change: RailFold): Promise<number> {
    const tracker = await this.feed.track(scope, [change.fromCustomerId, change.intoCustomerId]);
    const moved = await this.entitlements.moveRailRows(scope, change.fromCustomerId, change.intoCustomerId, this.clock.now());
    await tracker.publish(
      (_key, kind) => (kind === 'deactivated' ? 'revoke' : 'purchase'),
      (customerId) => (customerId === change.intoCustomerId ? [...(change.events ?? [])] : []),
    );
    return moved;
  }

  /** Time passed the rows' ends: the customer's state now against the same state with the rows still active (cause `expiration`). */
  private async expiry(scope: TenantScope, change: Expiry): Promise<void> {
    if (change.passed.length === 0 || !(await this.feed.tracks(scope))) return;
    const after = await this.feed.activeState(scope, change.customerId);
    const reported: CustomerEntitlementChange = {
      customerId: change.customerId,
      before: [...after.entitlements, ...change.passed.map(lapsed)],
      after: after.entitlements,
      afterSnapshot: after.snapshot,
      causeOf: () => 'expiration',
      events: [],
    };
    await this.feed.publish(scope, [reported]);
  }
}

/** The entitlement as it was just before its end passed. */
function lapsed(row: PassedEntitlement): PublicEntitlement {
  return {
    object: 'entitlement',
    key: row.key,
    isActive: true,
    validUntil: row.validUntil,
    source: { rail: row.rail as PublicEntitlement['source']['rail'], productId: '', subscriptionId: '' },
    updatedAt: row.validUntil,
  };
}

function mutation(
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

/** The entitlement.*_manually event (developerUserId is added by the recorder). */
function manualEvent(type: string, customerId: string, key: string, validUntil: number | null, reason: string, auditEventId: string) {
  return { type, data: { serviceCustomerId: customerId, entitlementKey: key, validUntil, reason, auditEventId } };
}

function manualWrite(customerId: string, key: string, grantEventId: string, validUntil: number | null): EntitlementWrite {
  return {
    customerId,
    key,
    rail: 'manual',
    productId: MANUAL_PRODUCT_ID,
    subscriptionId: grantEventId,
    state: 'active',
    validUntil,
    lastEventId: grantEventId,
  };
}
