import type { TenantScope } from '#platform';
import type { AuditEntryInput } from '#audit';
import type { EntitlementState, GrantDuration, PurchaseRail } from '../domain/entitlement-rules.js';
import type { EntitlementMutation, PublicEntitlement } from '../domain/public-entitlement.js';

/** Why an entitlement changed, as the writer knows it. */
export type EntitlementChangeCause =
  | 'purchase'
  | 'renewal'
  | 'grant'
  | 'revoke'
  | 'refund'
  | 'expiration'
  | 'migration'
  | 'billing_issue'
  | 'pause'
  | 'chargeback'
  | 'extension'
  | 'product_change'
  | 'refund_reversed';

/** How one key of a customer's active set moved. */
export type KeyChange = 'activated' | 'extended' | 'deactivated';

/** An event the change adds to the entitlement update (subscription.*, entitlement.*_manually). */
export interface EntitlementSideEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Who asks: written into the audit entry. */
export interface MutationActor {
  /** `api_key:<keyId>` or `operator`. */
  actor: string;
  requestId: string | null;
}

/** One entitlement row of (customer, key, rail) as a purchase rail sees it now. */
export interface RailEntitlementRow {
  customerId: string;
  entitlementKey: string;
  productId: string;
  subscriptionId: string;
  state: EntitlementState;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  /** The audit entry of the change. */
  auditEventId: string;
}

/** A row whose validUntil passed, as the expiry scan reads it. */
export interface PassedEntitlement {
  projectId: string;
  env: 'sandbox' | 'production';
  customerId: string;
  key: string;
  rail: string;
  validUntil: number;
}

/** A manual grant of one key (`POST …/grant`, the console): starts or extends the customer's manual row. */
export interface ManualGrant {
  kind: 'manual_grant';
  customerId: string;
  entitlementKey: string;
  duration: GrantDuration;
  reason: string;
  who: MutationActor;
}

/** A manual revoke of one key: ends the customer's active manual row. */
export interface ManualRevoke {
  kind: 'manual_revoke';
  customerId: string;
  entitlementKey: string;
  reason: string;
  who: MutationActor;
}

/** Bulk user migration's lifetime grants: each (customer, key) without a manual row gets one. */
export interface MigrationGrant {
  kind: 'migration_grant';
  pairs: readonly { customerId: string; key: string }[];
  who: MutationActor;
  /** Human sentence naming the migration, in every audit entry. */
  reason: string;
}

/**
 * A purchase rail's view of a subscription after a rail event: its rows of (customer, key, rail),
 * written as given, and the rail's audit entry of the decision.
 */
export interface RailStateWrite {
  kind: 'rail_state';
  rail: PurchaseRail;
  /** The subscription's customer now (the side events are theirs). */
  customerId: string;
  /** The customer that held the subscription before, when another one (its rows end). */
  previousCustomerId?: string | null;
  /** Distinct (customer, key); the rows of `previousCustomerId` first. */
  rows: readonly RailEntitlementRow[];
  /** Why each key moved, by how it moved. */
  causes: Readonly<Record<KeyChange, EntitlementChangeCause>>;
  /** The events of `customerId` besides the entitlement update (subscription.*). */
  events: readonly EntitlementSideEvent[];
  /** The rail's audit entry of the decision, appended after the rows (carries its eventId). */
  audit: AuditEntryInput & { eventId: string };
  /** The customer was created rail-only by this event's resolution (it has no developer user id yet). */
  railOnlyCustomer?: boolean;
}

/** A rail-only customer folded into another (or an approved merge): the rail rows move to `intoCustomerId`. */
export interface RailFold {
  kind: 'fold';
  fromCustomerId: string;
  intoCustomerId: string;
  /** The events of `intoCustomerId` besides the entitlement update (`subscription.transferred`, one per subscription moved). */
  events?: readonly EntitlementSideEvent[];
}

/** Time passed the validUntil of these rows of one customer (nothing is written: the change is reported). */
export interface Expiry {
  kind: 'expiry';
  customerId: string;
  passed: readonly PassedEntitlement[];
}

/** Every way an entitlement changes: the one command `EntitlementWriter.apply` takes. */
export type EntitlementChange = ManualGrant | ManualRevoke | MigrationGrant | RailStateWrite | RailFold | Expiry;

export interface MigrationGrantOutcome {
  /** Pairs granted by this call, each with its audit entry. */
  granted: { customerId: string; key: string; eventId: string }[];
  /** Pairs that already had a manual entitlement (any state): left untouched, no audit entry. */
  alreadyPresent: number;
}

/** What `apply` answers, per kind of change. */
export interface EntitlementChangeResults {
  manual_grant: EntitlementMutation;
  manual_revoke: EntitlementMutation;
  migration_grant: MigrationGrantOutcome;
  /** The rows written, in the command's order. */
  rail_state: PublicEntitlement[];
  /** How many rows moved. */
  fold: number;
  expiry: void;
}

export type EntitlementChangeResult<C extends EntitlementChange> = EntitlementChangeResults[C['kind']];

/** One customer's entitlement change inside the writer's transaction. */
export interface CustomerEntitlementChange {
  customerId: string;
  /** Active entitlements before and after the change (rows of every rail, not collapsed). */
  before: PublicEntitlement[];
  after: PublicEntitlement[];
  /**
   * The database snapshot (`pg_snapshot` text) `after` holds in: it is the state the change
   * read, plus what the change wrote. A change of the customer that another transaction
   * committed outside this snapshot is missing from `after` (the sink reads the state again
   * where that can have happened).
   */
  afterSnapshot: string;
  /** The customer's first developer user id, when the writer already read it (the sink reads it otherwise). */
  developerUserId?: string | null;
  /** Why each changed key changed. */
  causeOf: (key: string, change: KeyChange) => EntitlementChangeCause;
  events: EntitlementSideEvent[];
}

/**
 * What another context (outbound webhooks) attaches with `EntitlementWriter.attach` to hear
 * every entitlement change, inside the writer's transaction: a failing sink rolls the change
 * back, and a rolled-back change leaves nothing behind.
 */
export interface EntitlementChangeSink {
  /** Whether changes of the scope are of interest at all; when not, the writer reads nothing for the sink (the change costs no statement more). */
  wants(scope: TenantScope): Promise<boolean>;
  record(scope: TenantScope, changes: CustomerEntitlementChange[]): Promise<void>;
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
