import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { IdentityProviderView, PutIdentityProviderDto } from '../tokens/identity-provider.dto.js';
import { IdentityProviderService } from '../tokens/identity-provider.service.js';
import { IdentityAdminService } from './identity-admin.service.js';
import { ErasureList, MergeReviewList } from './identity-admin.views.js';

/** Operator endpoints of identity (the /admin operator middleware authenticates them). */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId')
export class IdentityAdminController {
  constructor(
    private readonly providers: IdentityProviderService,
    private readonly admin: IdentityAdminService,
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
}
