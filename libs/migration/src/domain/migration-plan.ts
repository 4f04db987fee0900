/**
 * Pure resolution of migration rows against a snapshot of the alias graph, row after row in
 * request order (a later row sees what an earlier one linked or created). No I/O: the
 * service loads the snapshot, runs the plan, then writes it set-based.
 */
import { decideOwner } from '#identity';
import type { MigrationRow } from './migration-rows.js';

export const DEVELOPER_ALIAS_TYPE = 'developer';

export type RowOutcome = 'matched' | 'created' | 'existing' | 'conflict';

export interface MigrationConflict {
  developerUserId: string;
  /** Rail name → customer its id resolved to (a second id of one rail resolving elsewhere: `<rail>:<field>`). */
  railResolutions: Record<string, string>;
  reason: string;
  /** The customer the developer user id already belongs to, when that is what disagrees. */
  developerCustomerId?: string;
}

export interface RowPlan {
  row: MigrationRow;
  outcome: RowOutcome;
  /** The row's customer (absent on a conflict). */
  customerId: string | null;
  conflict: MigrationConflict | null;
}

export interface AliasOwner {
  customerId: string;
  forgotten: boolean;
}

export interface GraphSnapshot {
  /** `type\u0000value` → owner, for every node the rows name. */
  owners: Map<string, AliasOwner>;
  /** Developer user ids of the existing customers that own a node the rows name. */
  developerIds: Map<string, Set<string>>;
}

export interface MigrationPlan {
  rows: RowPlan[];
  /** Customers to create, with the row that creates each. */
  newCustomers: { customerId: string; row: MigrationRow }[];
  /** Nodes to link (none already linked), in request order. */
  links: { type: string; value: string; customerId: string }[];
}

export const nodeKey = (type: string, value: string): string => `${type}\u0000${value}`;

export function planMigration(rows: readonly MigrationRow[], snapshot: GraphSnapshot, newCustomerId: () => string): MigrationPlan {
  const owners = new Map(snapshot.owners);
  const developerIds = new Map([...snapshot.developerIds].map(([id, set]) => [id, new Set(set)]));
  const plans: RowPlan[] = [];
  const newCustomers: MigrationPlan['newCustomers'] = [];
  const links: MigrationPlan['links'] = [];

  const link = (type: string, value: string, customerId: string) => {
    owners.set(nodeKey(type, value), { customerId, forgotten: false });
    links.push({ type, value, customerId });
  };

  for (const row of rows) {
    const devOwner = owners.get(nodeKey(DEVELOPER_ALIAS_TYPE, row.developerUserId));
    // A developer id of a forgotten customer is unknown (its node is released, as identify does).
    const developerCustomer = devOwner && !devOwner.forgotten ? devOwner.customerId : null;

    const railResolutions: Record<string, string> = {};
    const railCustomers = new Set<string>();
    for (const id of row.railIds) {
      // A rail node of a forgotten customer reads as unknown (released, as the rails do).
      const owner = owners.get(nodeKey(id.type, id.value));
      if (!owner || owner.forgotten) continue;
      railCustomers.add(owner.customerId);
      const name = railResolutions[id.rail] === undefined || railResolutions[id.rail] === owner.customerId ? id.rail : `${id.rail}:${id.field}`;
      railResolutions[name] = owner.customerId;
    }

    const conflict = (reason: string, extra: Partial<MigrationConflict> = {}) =>
      plans.push({ row, outcome: 'conflict', customerId: null, conflict: { developerUserId: row.developerUserId, railResolutions, reason, ...extra } });

    if (railCustomers.size > 1) {
      conflict('rail_ids_resolve_to_different_customers');
      continue;
    }

    // Identity's alias-graph rule decides: the developer user id is the primary id, the rail
    // ids the secondary. A bulk import reports a review as the row's conflict instead of queueing it.
    const railCustomer = railCustomers.size === 1 ? [...railCustomers][0] : null;
    const decision = decideOwner(developerCustomer, railCustomer);
    if (decision.kind === 'review') {
      conflict('rail_ids_belong_to_another_customer', { developerCustomerId: decision.customerId });
      continue;
    }
    let customerId: string;
    let outcome: RowOutcome;
    if (decision.kind === 'create') {
      customerId = newCustomerId();
      outcome = 'created';
      newCustomers.push({ customerId, row });
    } else if (railCustomer === null) {
      customerId = decision.customerId;
      outcome = 'existing';
    } else {
      // Stricter than identify: a row's developer user id never joins another developer user's customer.
      const others = [...(developerIds.get(railCustomer) ?? [])].filter((id) => id !== row.developerUserId);
      if (developerCustomer === null && others.length > 0) {
        conflict('rail_ids_belong_to_another_user');
        continue;
      }
      customerId = decision.customerId;
      outcome = 'matched';
    }

    if (developerCustomer === null) {
      link(DEVELOPER_ALIAS_TYPE, row.developerUserId, customerId);
      const ids = developerIds.get(customerId) ?? new Set<string>();
      ids.add(row.developerUserId);
      developerIds.set(customerId, ids);
    }
    for (const id of row.railIds) {
      const owner = owners.get(nodeKey(id.type, id.value));
      if (!owner || owner.forgotten) link(id.type, id.value, customerId);
    }
    plans.push({ row, outcome, customerId, conflict: null });
  }
  return { rows: plans, newCustomers, links };
}
