import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator, RequestId } from '#platform';
import { MergeReviewDecisions, type ReviewDecision } from '../console/merge-review-decisions.service.js';
import { IdentityProviderView, PutIdentityProviderDto } from '../tokens/identity-provider.dto.js';
import { IdentityProviderService } from '../tokens/identity-provider.service.js';
import { IdentityAdminService } from './identity-admin.service.js';
import { DecidedMergeReviewView, ErasureList, MergeReviewList } from './identity-admin.views.js';

/** Operator endpoints of identity (the /admin operator middleware authenticates them). */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId')
export class IdentityAdminController {
  constructor(
    private readonly providers: IdentityProviderService,
    private readonly admin: IdentityAdminService,
    private readonly decisions: MergeReviewDecisions,
  ) {}

  @Put('identity-provider')
  @ApiOperation({
    operationId: 'adminPutIdentityProvider',
    summary: "Set the project's identity provider: inline JWKS or a JWKS URI (idTokens are verified against it)",
  })
  @ApiOkResponse({ type: IdentityProviderView })
  @ApiErrors({ 400: ['missing_required_param'] })
  putIdentityProvider(@Param('projectId') projectId: string, @Body() body: PutIdentityProviderDto): Promise<IdentityProviderView> {
    return this.providers.put(projectId, body);
  }

  @Get('merge-reviews')
  @ApiOperation({ operationId: 'adminListMergeReviews', summary: 'Identify conflicts queued for review (newest first)' })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Both environments when absent' })
  @ApiOkResponse({ type: MergeReviewList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  mergeReviews(@Param('projectId') projectId: string, @Query('env') env?: string): Promise<MergeReviewList> {
    return this.admin.mergeReviews(projectId, env);
  }

  @Get('erasures')
  @ApiOperation({ operationId: 'adminListErasures', summary: 'The erasure queue (newest first)' })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Both environments when absent' })
  @ApiOkResponse({ type: ErasureList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  erasures(@Param('projectId') projectId: string, @Query('env') env?: string): Promise<ErasureList> {
    return this.admin.erasures(projectId, env);
  }

  @Post('merge-reviews/:reviewId/approve')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adminApproveMergeReview',
    summary: "Approve an identify conflict: the other customer's ids, subscriptions and rail entitlements move to the canonical customer",
  })
  @ApiOkResponse({ type: DecidedMergeReviewView })
  @ApiErrors({ 404: ['resource_missing'], 409: ['review_already_decided'] })
  approve(@Param('projectId') projectId: string, @Param('reviewId') reviewId: string, @RequestId() requestId: string): Promise<DecidedMergeReviewView> {
    return this.decide(projectId, reviewId, 'approved', requestId);
  }

  @Post('merge-reviews/:reviewId/dismiss')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminDismissMergeReview', summary: 'Dismiss an identify conflict: both customers stay as they are' })
  @ApiOkResponse({ type: DecidedMergeReviewView })
  @ApiErrors({ 404: ['resource_missing'], 409: ['review_already_decided'] })
  dismiss(@Param('projectId') projectId: string, @Param('reviewId') reviewId: string, @RequestId() requestId: string): Promise<DecidedMergeReviewView> {
    return this.decide(projectId, reviewId, 'dismissed', requestId);
  }

  private async decide(projectId: string, reviewId: string, decision: ReviewDecision, requestId: string): Promise<DecidedMergeReviewView> {
    const r = await this.decisions.decide(projectId, reviewId, decision, requestId);
    const seconds = (d: Date) => Math.floor(new Date(d).getTime() / 1000);
    return {
      object: 'merge_review',
      id: r.id,
      env: r.env,
      developerUserId: r.developerUserId,
      anonymousId: r.anonymousId,
      canonicalCustomerId: r.canonicalCustomerId,
      otherCustomerId: r.otherCustomerId,
      status: decision,
      createdAt: seconds(r.createdAt),
      decidedAt: seconds(r.decidedAt!),
      auditEventId: r.auditEventId,
    };
  }
}
