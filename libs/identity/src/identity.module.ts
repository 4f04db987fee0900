import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { CustomerDirectory } from './customers/customer-directory.service.js';
import { RailCustomers } from './customers/rail-customers.service.js';
import { BulkIdentity } from './customers/bulk-identity.service.js';
import { BulkIdentityRepository } from './customers/bulk-identity.repository.js';
import { IdentityRepository } from './customers/identity.repository.js';
import { ErasureHooks } from './forget/erasure-hooks.js';
import { ErasureRepository } from './forget/erasure.repository.js';
import { ErasureWorker } from './forget/erasure.job.js';
import { ForgetController } from './forget/forget.controller.js';
import { ForgetService } from './forget/forget.service.js';
import { IdentifyController } from './identify/identify.controller.js';
import { IdentifyService } from './identify/identify.service.js';
import { IdentifyVelocityLimiter } from './identify/velocity-limiter.js';
import { LinkHooks } from './identify/link-hooks.js';
import { IdentityAdminController } from './operator/identity-admin.controller.js';
import { IdentityAdminService } from './operator/identity-admin.service.js';
import { CustomerConsole } from './console/customer-console.service.js';
import { MergeHooks } from './console/merge-hooks.js';
import { MergeReviewDecisions } from './console/merge-review-decisions.service.js';
import { MergeReviewDecisionsRepository } from './console/merge-review-decisions.repository.js';
import { CustomerReadsRepository } from './console/customer-reads.repository.js';
import { IdTokenVerifier } from './tokens/id-token-verifier.service.js';
import { IdentityProviderService } from './tokens/identity-provider.service.js';
import { IdentityProviderRepository } from './tokens/identity-provider.repository.js';

/** Customers, the alias graph, identify, forget and erasure, merge reviews, the identity provider. */
@Module({
  imports: [KeysModule, AuditModule],
  controllers: [IdentifyController, ForgetController, IdentityAdminController],
  providers: [
    IdentityRepository,
    CustomerDirectory,
    RailCustomers,
    BulkIdentityRepository,
    BulkIdentity,
    IdentifyService,
    IdentifyVelocityLimiter,
    LinkHooks,
    IdTokenVerifier,
    IdentityProviderRepository,
    IdentityProviderService,
    ForgetService,
    ErasureRepository,
    ErasureHooks,
    ErasureWorker,
    IdentityAdminService,
    CustomerConsole,
    CustomerReadsRepository,
    MergeHooks,
    MergeReviewDecisions,
    MergeReviewDecisionsRepository,
  ],
  exports: [
    CustomerDirectory,
    CustomerConsole,
    MergeHooks,
    RailCustomers,
    BulkIdentity,
    ErasureHooks,
    ErasureWorker,
    IdTokenVerifier,
    IdentifyService,
    LinkHooks,
  ],
})
export class IdentityModule {}
