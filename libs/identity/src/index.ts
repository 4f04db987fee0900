import { CustomerListSearch1790000003710 } from './migrations/1790000003710-customer-list-search.migration.js';
import { MergeReviewDecisions1790000002650 } from './migrations/1790000002650-merge-review-decisions.migration.js';
import { ConsoleCustomerIndexes1790000002610 } from './migrations/1790000002610-console-customer-indexes.migration.js';
import { CreateIdentity1790000000300 } from './migrations/1790000000300-create-identity.migration.js';
import { ErasureJobs1790000000910 } from './migrations/1790000000910-erasure-jobs.migration.js';
import { CustomerScopeForeignKeys1790000000920 } from './migrations/1790000000920-customer-scope-foreign-keys.migration.js';

export { IdentityModule } from './identity.module.js';
export { CustomerDirectory, type CustomerHint } from './customers/customer-directory.service.js';
export { CustomerConsole, type CustomerIdentities, type CustomerMatch, type CustomerSearchHit } from './console/customer-console.service.js';
export { MergeHooks, type MergeHook, type CustomerMerge } from './console/merge-hooks.js';
export type { AliasRow as CustomerAliasRow } from './console/customer-reads.repository.js';
export type { CustomerProfile } from './customers/identity.repository.js';
export { RailCustomers, type AliasNode } from './customers/rail-customers.service.js';
export { BulkIdentity, type BulkAliasHit, type BulkCustomerRow } from './customers/bulk-identity.service.js';
export { ErasureHooks, type ErasureHook, type ErasureSubject } from './forget/erasure-hooks.js';
export { ErasureWorker, ERASURE_SLA_DAYS } from './forget/erasure.job.js';
export { IdTokenVerifier, type VerifiedIdentity } from './tokens/id-token-verifier.service.js';
export { IdentifyService } from './identify/identify.service.js';
export { LinkHooks, type LinkHook, type AnonymousLink } from './identify/link-hooks.js';
export { slidingWindowDecision, VELOCITY_LIMIT, VELOCITY_WINDOW_MS } from './identify/velocity-limiter.js';
export { sanitizeTraits, mergeTraits, MAX_TRAIT_KEYS, MAX_TRAIT_STRING, type Traits, type TraitValue } from './domain/traits.js';
export { ALIAS_TYPES, PERSONAL_ALIAS_TYPES, USER_ID_PATTERN, ANONYMOUS_ID_PATTERN, APP_ACCOUNT_TOKEN_PATTERN } from './domain/identifier-rules.js';
export { CUSTOMER_ID_PREFIX } from './domain/ids.js';
export { decideOwner, ownersDisagree, type OwnerDecision } from './domain/alias-graph-rules.js';

/** Migrations of the identity context, in order. */
export const IDENTITY_MIGRATIONS = [
  CreateIdentity1790000000300,
  ErasureJobs1790000000910,
  CustomerScopeForeignKeys1790000000920,
  ConsoleCustomerIndexes1790000002610,
  MergeReviewDecisions1790000002650,
  CustomerListSearch1790000003710,
];
export { addCustomerScopeForeignKey } from './migrations/customer-scope-foreign-key.js';
