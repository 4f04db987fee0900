import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { BulkIdentity, inTransactionWithRetry, mergeTraits, type Traits } from '#identity';
import { MigrationGrants } from '#entitlements';
import { type CustomerRailStatus, CustomerRailStatuses } from '#rails';
import { DEVELOPER_ALIAS_TYPE, type GraphSnapshot, nodeKey, planMigration, type RowPlan } from '../domain/migration-plan.js';
import { isRowError, type MigrationRow, PURCHASE_ALIAS_TYPES, type RowError, usersOf, validateRow } from '../domain/migration-rows.js';
import { MigratedUsersRepository } from './migrated-users.repository.js';
import type { MigrationResultView } from './migration-result.view.js';

/** The audit reason of every migration grant. */
export const MIGRATION_GRANT_REASON = 'Asserted by bulk user migration (POST /v1/migration/users): lifetime grant, no rail behind the customer';

interface Counts {
  matched: number;
  created: number;
  existing: number;
  entitlementsGranted: number;
  entitlementsAlreadyGranted: number;
  entitlementsSkippedRailBacked: number;
  entitlementsSkippedLapsed: number;
  entitlementsUndetermined: number;
  entitlementKeysRegistered: number;
  conflicts: RowPlan['conflict'][];
}

/**
 * Bulk user migration. One transaction per request, set-based: load the alias
 * nodes the rows name, lock their customers, resolve the rows in order in memory, then write
 * customers, links, profiles, grants, audit entries and key registrations with one
 * statement each. Races with a concurrent migration, identify or rail notification are
 * settled by the unique constraints: the loser's transaction starts over and re-reads.
 */
@Injectable()
export class UserMigrationService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly identity: BulkIdentity,
    private readonly grants: MigrationGrants,
    private readonly railStatuses: CustomerRailStatuses,
    private readonly migratedUsers: MigratedUsersRepository,
    private readonly clock: Clock,
  ) {}

  async migrate(auth: AuthContext, body: unknown): Promise<MigrationResultView> {
    const users = usersOf(body);
    const errors: RowError[] = [];
    const rows: MigrationRow[] = [];
    const seen = new Set<string>();
    users.forEach((input, rowIndex) => {
      const row = validateRow(input, rowIndex);
      if (isRowError(row)) errors.push(row);
      else if (seen.has(row.developerUserId)) errors.push({ rowIndex, developerUserId: row.developerUserId, reason: 'developerUserId_duplicate' });
      else {
        seen.add(row.developerUserId);
        rows.push(row);
      }
    });

    const counts = rows.length === 0 ? emptyCounts() : await inTransactionWithRetry(this.dataSource, (manager) => this.apply(manager, auth, rows));
    return {
      object: 'migration_result',
      env: auth.env,
      totalRows: users.length,
      matched: counts.matched,
      created: counts.created,
      conflicts: counts.conflicts.length,
      errors: errors.length,
      entitlementsGranted: counts.entitlementsGranted,
      entitlementsSkippedRailBacked: counts.entitlementsSkippedRailBacked,
      entitlementsSkippedLapsed: counts.entitlementsSkippedLapsed,
      entitlementsUndetermined: counts.entitlementsUndetermined,
      entitlementKeysRegistered: counts.entitlementKeysRegistered,
      details: {
        errors: errors.sort((a, b) => a.rowIndex - b.rowIndex),
        conflicts: counts.conflicts.filter((c) => c !== null),
        existing: counts.existing,
        entitlementsAlreadyGranted: counts.entitlementsAlreadyGranted,
      },
      processedAt: this.clock.nowMs(),
    };
  }

  private async apply(manager: EntityManager, auth: AuthContext, rows: MigrationRow[]): Promise<Counts> {
    const scope: TenantScope = auth;
    const counts = emptyCounts();

    // 1. The graph around the rows: every node they name, and those nodes' customers (locked).
    const nodes = new Map<string, { type: string; value: string }>();
    for (const row of rows) {
      nodes.set(nodeKey(DEVELOPER_ALIAS_TYPE, row.developerUserId), { type: DEVELOPER_ALIAS_TYPE, value: row.developerUserId });
      for (const id of row.railIds) nodes.set(nodeKey(id.type, id.value), { type: id.type, value: id.value });
    }
    const hits = await this.identity.findAliases(manager, scope, [...nodes.values()]);
    // Nodes of forgotten customers are unknown again: free them, as identify and the rails do.
    await this.identity.releaseForgottenAliases(manager, scope, hits);
    const known = [...new Set(hits.filter((hit) => !hit.forgotten).map((hit) => hit.customerId))];
    const locked = new Map((await this.identity.lockCustomers(manager, scope, known)).map((row) => [row.customerId, row]));
    const neighbours = await this.identity.aliasesOfCustomers(manager, scope, known, [DEVELOPER_ALIAS_TYPE, ...PURCHASE_ALIAS_TYPES]);
    const snapshot: GraphSnapshot = { owners: new Map(), developerIds: new Map() };
    for (const hit of hits) snapshot.owners.set(nodeKey(hit.type, hit.value), { customerId: hit.customerId, forgotten: hit.forgotten });
    const withPurchaseIds = new Set<string>();
    for (const alias of neighbours) {
      if (alias.type === DEVELOPER_ALIAS_TYPE) {
        const ids = snapshot.developerIds.get(alias.customerId) ?? new Set<string>();
        ids.add(alias.value);
        snapshot.developerIds.set(alias.customerId, ids);
      } else {
        withPurchaseIds.add(alias.customerId);
      }
    }

    // 2. Rows in order, in memory.
    const plan = planMigration(rows, snapshot, () => this.identity.newCustomerId());

    // 3. Writes, one statement each.
    const now = this.clock.now();
    await this.identity.createCustomers(
      manager,
      scope,
      plan.newCustomers.map(({ customerId, row }) => ({ customerId, email: row.email, traits: row.traits })),
      now,
    );
    await this.identity.linkAliases(manager, scope, plan.links, now);
    const profiles = new Map<string, { customerId: string; email: string | null; traits: Traits }>();
    for (const rowPlan of plan.rows) {
      const { row, customerId } = rowPlan;
      if (customerId === null || rowPlan.outcome === 'created') continue;
      if (row.email === null && !row.hasTraits) continue;
      const current = profiles.get(customerId) ?? locked.get(customerId);
      if (!current) continue;
      profiles.set(customerId, {
        customerId,
        email: row.email ?? current.email,
        traits: row.hasTraits ? mergeTraits(current.traits, row.traits) : current.traits,
      });
    }
    await this.identity.updateProfiles(manager, scope, [...profiles.values()], now);
    await this.migratedUsers.upsert(
      scope,
      plan.rows
        .filter((p) => p.customerId !== null)
        .map((p) => ({ developerUserId: p.row.developerUserId, customerId: p.customerId as string, displayName: p.row.displayName })),
      now,
      manager,
    );

    // 4. The gate: what the rails hold for each customer decides who receives the asserted grant.
    const gated = plan.rows.filter((p) => p.customerId !== null && p.row.entitlementKeys.length > 0);
    const existingCustomers = gated.filter((p) => p.outcome !== 'created').map((p) => p.customerId as string);
    const status = await this.railStatuses.of(scope, existingCustomers, this.clock.nowMs(), manager);
    const pairs: { customerId: string; key: string }[] = [];
    for (const p of gated) {
      const customerId = p.customerId as string;
      const keys = p.row.entitlementKeys.length;
      const rail: CustomerRailStatus = status.get(customerId) ?? 'none';
      if (rail === 'live') counts.entitlementsSkippedRailBacked += keys;
      else if (rail === 'lapsed') counts.entitlementsSkippedLapsed += keys;
      else if (p.row.railIds.some((id) => id.purchase) || withPurchaseIds.has(customerId)) counts.entitlementsUndetermined += keys;
      else for (const key of p.row.entitlementKeys) pairs.push({ customerId, key });
    }
    const registered = await this.grants.registerKeys(
      manager,
      scope.projectId,
      rows.flatMap((row) => row.entitlementKeys),
    );
    const granted = await this.grants.grantLifetime(manager, scope, pairs, {
      actor: `api_key:${auth.keyId}`,
      requestId: auth.requestId,
      reason: MIGRATION_GRANT_REASON,
    });

    counts.entitlementKeysRegistered = registered.length;
    counts.entitlementsGranted = granted.granted.length;
    counts.entitlementsAlreadyGranted = granted.alreadyPresent;
    for (const p of plan.rows) {
      if (p.outcome === 'conflict') counts.conflicts.push(p.conflict);
      else counts[p.outcome] += 1;
    }
    return counts;
  }
}

function emptyCounts(): Counts {
  return {
    matched: 0,
    created: 0,
    existing: 0,
    entitlementsGranted: 0,
    entitlementsAlreadyGranted: 0,
    entitlementsSkippedRailBacked: 0,
    entitlementsSkippedLapsed: 0,
    entitlementsUndetermined: 0,
    entitlementKeysRegistered: 0,
    conflicts: [],
  };
}
