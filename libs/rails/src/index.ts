import { RailSubscriptionIdPrefix1790000003711 } from './migrations/1790000003711-rail-subscription-id-prefix.migration.js';
import { RailNotificationsRecentIndex1790000002640 } from './migrations/1790000002640-rail-notifications-recent-index.migration.js';
import { RailsSchema1790000000600 } from './migrations/1790000000600-rails-schema.migration.js';
import { CustomerScopeForeignKey1790000000923 } from './migrations/1790000000923-customer-scope-foreign-key.migration.js';
import { RailExpiryReads1790000002300 } from './migrations/1790000002300-rail-expiry-reads.migration.js';
import { AndroidVoidedPurchases1790000003617 } from './migrations/1790000003617-android-voided-purchases.migration.js';
import { AndroidVoidedReads1790000003618 } from './migrations/1790000003618-android-voided-reads.migration.js';
import { RailSubscriptionObjects1790000003640 } from './migrations/1790000003640-rail-subscription-objects.migration.js';
import { RefundRequests1790000003730 } from './migrations/1790000003730-refund-requests.migration.js';
import { RailConnectionChecks1790000003671 } from './migrations/1790000003671-rail-connection-checks.migration.js';
import { RailSubscriptionsLifecycleState1790000003751 } from './migrations/1790000003751-rail-subscriptions-lifecycle-state.migration.js';
import { SubscriptionHistory1790000003740 } from './migrations/1790000003740-subscription-history.migration.js';
import { SubscriptionHistoryBackfill1790000003900 } from './migrations/1790000003900-subscription-history-backfill.migration.js';

export { RailsModule } from './rails.module.js';
export {
  newRailEventId,
  type RailStateChange,
  type RailEventContext,
  type RailApplyResult,
  type RailDecisionRecord,
} from './model/rail-state-applier.service.js';
export {
  RailRevenueFeed,
  type RailRevenueSink,
  type RailRevenueChange,
  type RailPriceLine,
  type RailPayment,
  type RailMoneyReturn,
  type RailAmount,
  type BillingPeriodUnit,
} from './model/rail-revenue-feed.service.js';
export { CustomerRailStatuses } from './model/customer-rail-statuses.service.js';
export { SubscriptionView } from './subscriptions/subscription.view.js';
export { SubscriptionCounts } from './subscriptions/subscription-counts.service.js';
export { BILLING_ISSUE_STATUSES } from './model/subscription-events.js';
export { type RailSubscriptionWrite, type RailTransactionRecord, type RailNotificationRecord } from './model/rail-subscriptions.repository.js';
export type { RailSettingsRecord } from './model/rail-settings.repository.js';
export {
  RAIL_STATES,
  RAIL_DECISIONS,
  RAIL_ALIAS_TYPES,
  type RailState,
  type RailDecision,
  type RailSubscriptionRecord,
  type CustomerRailStatus,
  isOlderThanStored,
  changesState,
  isLive,
  customerRailStatus,
} from './model/rail-model.js';

export {
  IosStoreVerifier,
  StoreSignedDataVerifier,
  StoreVerificationError,
  describeVerificationFailure,
  type Verified,
} from './ios/ios-store-verifier.service.js';
export { type IosStoreSettings, parsePemCertificates } from './ios/ios-store-settings.js';
export {
  envOfStoreEnvironment,
  stateOfTransaction,
  isFamilyShared,
  normaliseAppAccountToken,
  type StoreTransaction,
  type StoreTransactionState,
} from './ios/ios-store-rules.js';
export { APPLE_ROOT_CERTIFICATES, appleRootCertificates } from './ios/apple-root-certificates.js';
export { RailSecretsStatus } from './operator/rail-secrets-status.js';

/** Migrations of the rails context, in order. */
export const RAILS_MIGRATIONS = [
  RailsSchema1790000000600,
  CustomerScopeForeignKey1790000000923,
  RailExpiryReads1790000002300,
  RailNotificationsRecentIndex1790000002640,
  AndroidVoidedPurchases1790000003617,
  AndroidVoidedReads1790000003618,
  RailSubscriptionObjects1790000003640,
  RailConnectionChecks1790000003671,
  RailSubscriptionIdPrefix1790000003711,
  RefundRequests1790000003730,
  RailSubscriptionsLifecycleState1790000003751,
  SubscriptionHistory1790000003740,
  SubscriptionHistoryBackfill1790000003900,
];

// Store notifications
export { StoreNotificationsModule } from './store-notifications.module.js';
export { RailSecrets, RAIL_SECRETS_CHECK_INTERVAL_MS } from './secrets/rail-secrets.service.js';
export { parseRailSecrets, RailSecretsError, type RailSecretsContent, type ProjectRailSecrets, type ServiceAccountKey } from './secrets/rail-secrets.js';

// Reading the rails (reconciliation, refresh, migration gate)
export { RailReader, type RailReadReason, type RailReadResult, type RailReadOptions } from './reading/rail-reader.service.js';
export { RAIL_READ_BUCKETS } from './reading/rail-read-bounds.service.js';
export { ExpiryReadsJob, EXPIRY_READS_EVERY_MS, type ExpirySweepSummary } from './reconcile/expiry-reads.job.js';
export {
  AndroidVoidedReadsJob,
  ANDROID_VOIDED_READS_EVERY_MS,
  ANDROID_VOIDED_READ_INTERVAL_MS,
  ANDROID_VOIDED_READ_OVERLAP_MS,
} from './android/android-voided-reads.job.js';
export { RefundRequestsJob, REFUND_REQUESTS_EVERY_MS, type RefundRequestSweepSummary } from './refunds/refund-requests.job.js';
export { EXPIRY_READ_BACKOFF_MS, expiryBackoffMs, settleExpiryRead, type ExpiryReadSettlement } from './reconcile/expiry-reads.js';
