import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, Sql } from '#platform';
import type { AuthContext } from '#keys';
import { BulkIdentity, mergeTraits, type Traits } from '#identity';
import { EntitlementKeyRegistry, EntitlementWriter } from '#entitlements';
import { CustomerRailStatuses, RailReader } from '#rails';
import { type GateOutcome, type GateRailId, type RailFound, distinctRailIds, gateOutcome, railIdKey } from '../domain/migration-gate.js';
import { DEVELOPER_ALIAS_TYPE, type GraphSnapshot, nodeKey, planMigration, type RowPlan } from '../domain/migration-plan.js';
import { isRowError, type MigrationRow, PURCHASE_ALIAS_TYPES, RAIL_ID_FIELDS, type RowError, usersOf, validateRow } from '../domain/migration-rows.js';
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

/** A row's customer the gate decides after reading its purchase ids from their rails. */
interface PendingGate {
  customerId: string;
  keys: string[];
  ids: GateRailId[];
}

/** Rail reads of one request: a few at a time, and none started after this long (the rest stay undetermined). */
const GATE_READS_AT_ONCE = 4;
export const GATE_READS_BUDGET_MS = 20_000;
/** A rate-limit wait the gate sits out (once) rather than leave the id undetermined. */
const GATE_READ_MAX_WAIT_MS = 1_000;

/** The purchase alias types and their rails. */
const RAIL_OF_PURCHASE_TYPE = new Map<string, GateRailId['rail']>(RAIL_ID_FIELDS.filter((f) => f.purchase).map((f) => [f.type, f.rail]));

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
    private readonly sql: Sql,
    private readonly identity: BulkIdentity,
    private readonly writer: EntitlementWriter,
    private readonly registry: EntitlementKeyRegistry,
    private readonly railStatuses: CustomerRailStatuses,
    private readonly reader: RailReader,
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

    let counts = emptyCounts();
    if (rows.length > 0) {
      // Links first, so a rail read applies to the row's customer; then the rails of the
      // customers without a record are read, outside any transaction; then those are decided.
      const first = await this.sql.transaction(() => this.apply(auth, rows), { retry: true });
      counts = first.counts;
      if (first.pending.length > 0) {
        const found = await this.readRails(auth, first.pending);
        const decided = await this.sql.transaction(() => this.decidePending(auth, first.pending, found), { retry: true });
        for (const key of GATE_COUNTS) counts[key] += decided[key];
      }
    }
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

  private async apply(auth: AuthContext, rows: MigrationRow[]): Promise<{ counts: Counts; pending: PendingGate[] }> {
    const scope: TenantScope = auth;
    const counts = emptyCounts();

    // 1. The graph around the rows: every node they name, and those nodes' customers (locked).
    const nodes = new Map<string, { type: string; value: string }>();
    for (const row of rows) {
      nodes.set(nodeKey(DEVELOPER_ALIAS_TYPE, row.developerUserId), { type: DEVELOPER_ALIAS_TYPE, value: row.developerUserId });
      for (const id of row.railIds) nodes.set(nodeKey(id.type, id.value), { type: id.type, value: id.value });
    }
    const hits = await this.identity.findAliases(scope, [...nodes.values()]);
    // Nodes of forgotten customers are unknown again: free them, as identify and the rails do.
    await this.identity.releaseForgottenAliases(scope, hits);
    const known = [...new Set(hits.filter((hit) => !hit.forgotten).map((hit) => hit.customerId))];
    const locked = new Map((await this.identity.lockCustomers(scope, known)).map((row) => [row.customerId, row]));
    const neighbours = await this.identity.aliasesOfCustomers(scope, known, [DEVELOPER_ALIAS_TYPE, ...PURCHASE_ALIAS_TYPES]);
    const snapshot: GraphSnapshot = { owners: new Map(), developerIds: new Map() };
    for (const hit of hits) snapshot.owners.set(nodeKey(hit.type, hit.value), { customerId: hit.customerId, forgotten: hit.forgotten });
    const purchaseIdsOf = new Map<string, GateRailId[]>();
    for (const alias of neighbours) {
      if (alias.type === DEVELOPER_ALIAS_TYPE) {
        const ids = snapshot.developerIds.get(alias.customerId) ?? new Set<string>();
        ids.add(alias.value);
        snapshot.developerIds.set(alias.customerId, ids);
      } else {
        const rail = RAIL_OF_PURCHASE_TYPE.get(alias.type);
        if (rail) purchaseIdsOf.set(alias.customerId, [...(purchaseIdsOf.get(alias.customerId) ?? []), { rail, value: alias.value }]);
      }
    }

    // 2. Rows in order, in memory.
    const plan = planMigration(rows, snapshot, () => this.identity.newCustomerId());

    // 3. Writes, one statement each.
    const now = this.clock.now();
    await this.identity.createCustomers(
      scope,
      plan.newCustomers.map(({ customerId, row }) => ({ customerId, email: row.email, traits: row.traits })),
      now,
    );
    await this.identity.linkAliases(scope, plan.links, now);
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
    await this.identity.updateProfiles(scope, [...profiles.values()], now);
    await this.migratedUsers.upsert(
      scope,
      plan.rows
        .filter((p) => p.customerId !== null)
        .map((p) => ({ developerUserId: p.row.developerUserId, customerId: p.customerId as string, displayName: p.row.displayName })),
      now,
    );

    // 4. The gate: what the rails hold for each customer decides who receives the asserted
    // grant; a customer with purchase ids but no rail record is decided after reading them.
    const gated = plan.rows.filter((p) => p.customerId !== null && p.row.entitlementKeys.length > 0);
    const existingCustomers = gated.filter((p) => p.outcome !== 'created').map((p) => p.customerId as string);
    const status = await this.railStatuses.of(scope, existingCustomers, this.clock.nowMs());
    const pairs: { customerId: string; key: string }[] = [];
    const pending: PendingGate[] = [];
    for (const p of gated) {
      const customerId = p.customerId as string;
      const stored = status.get(customerId) ?? 'none';
      const ids =
        stored === 'none'
          ? distinctRailIds([
              ...p.row.railIds.filter((id) => id.purchase).map((id) => ({ rail: id.rail, value: id.value })),
              ...(purchaseIdsOf.get(customerId) ?? []),
            ])
          : [];
      if (ids.length > 0) pending.push({ customerId, keys: p.row.entitlementKeys, ids });
      else tally(counts, gateOutcome(stored, 0, []), customerId, p.row.entitlementKeys, pairs);
    }
    const registered = await this.registry.register(
      scope.projectId,
      rows.flatMap((row) => row.entitlementKeys),
      'migration',
    );
    const granted = await this.writer.apply(scope, {
      kind: 'migration_grant',
      pairs,
      who: { actor: `api_key:${auth.keyId}`, requestId: auth.requestId },
      reason: MIGRATION_GRANT_REASON,
    });

    counts.entitlementKeysRegistered = registered.length;
    counts.entitlementsGranted = granted.granted.length;
    counts.entitlementsAlreadyGranted = granted.alreadyPresent;
    for (const p of plan.rows) {
      if (p.outcome === 'conflict') counts.conflicts.push(p.conflict);
      else counts[p.outcome] += 1;
    }
    return { counts, pending };
  }

  /** Reads every pending rail id once (a few at a time, within the budget); an id not read is `unavailable`. */
  private async readRails(scope: TenantScope, pending: readonly PendingGate[]): Promise<Map<string, RailFound>> {
    const ids = distinctRailIds(pending.flatMap((p) => p.ids));
    const found = new Map<string, RailFound>();
    const deadline = this.clock.wallNowMs() + GATE_READS_BUDGET_MS;
    let next = 0;
    const readNext = async () => {
      while (next < ids.length && this.clock.wallNowMs() < deadline) {
        const id = ids[next++];
        found.set(railIdKey(id), await this.readOne(scope, id, deadline));
      }
    };
    await Promise.all(Array.from({ length: Math.min(GATE_READS_AT_ONCE, ids.length) }, readNext));
    return found;
  }

  private async readOne(scope: TenantScope, id: GateRailId, deadline: number): Promise<RailFound> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.reader.readRailId(scope, id.rail, id.value, 'migration');
        const wait = result.retryAfterMs ?? 0;
        if (
          result.found !== 'unavailable' ||
          !result.throttled ||
          attempt > 0 ||
          wait <= 0 ||
          wait > GATE_READ_MAX_WAIT_MS ||
          this.clock.wallNowMs() + wait >= deadline
        )
          return result.found;
        await new Promise((resolve) => setTimeout(resolve, wait));
      } catch {
        return 'unavailable';
      }
    }
  }

  /** Decides the customers whose rails were read: the stored records (after the reads), else what the reads found. */
  private async decidePending(auth: AuthContext, pending: readonly PendingGate[], found: ReadonlyMap<string, RailFound>): Promise<Counts> {
    const scope: TenantScope = auth;
    const counts = emptyCounts();
    const status = await this.railStatuses.of(
      scope,
      pending.map((p) => p.customerId),
      this.clock.nowMs(),
    );
    const pairs: { customerId: string; key: string }[] = [];
    for (const p of pending) {
      const reads = p.ids.map((id) => found.get(railIdKey(id)) ?? 'unavailable');
      tally(counts, gateOutcome(status.get(p.customerId) ?? 'none', p.ids.length, reads), p.customerId, p.keys, pairs);
    }
    if (pairs.length > 0) {
      const granted = await this.writer.apply(scope, {
        kind: 'migration_grant',
        pairs,
        who: { actor: `api_key:${auth.keyId}`, requestId: auth.requestId },
        reason: MIGRATION_GRANT_REASON,
      });
      counts.entitlementsGranted = granted.granted.length;
      counts.entitlementsAlreadyGranted = granted.alreadyPresent;
    }
    return counts;
  }
}

/** The counts the second step of the gate adds to the first's. */
const GATE_COUNTS = [
  'entitlementsGranted',
  'entitlementsAlreadyGranted',
  'entitlementsSkippedRailBacked',
  'entitlementsSkippedLapsed',
  'entitlementsUndetermined',
] as const satisfies readonly (keyof Counts)[];

/** Counts a customer's keys under the gate's outcome; granted keys join `pairs`. */
function tally(counts: Counts, outcome: GateOutcome, customerId: string, keys: readonly string[], pairs: { customerId: string; key: string }[]): void {
  if (outcome === 'skipped_rail_backed') counts.entitlementsSkippedRailBacked += keys.length;
  else if (outcome === 'skipped_lapsed') counts.entitlementsSkippedLapsed += keys.length;
  else if (outcome === 'undetermined') counts.entitlementsUndetermined += keys.length;
  else for (const key of keys) pairs.push({ customerId, key });
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
