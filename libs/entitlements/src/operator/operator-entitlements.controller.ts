import { Body, Controller, Get, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, TenantScopes, requestIdOf, Operator, type HttpRequest } from '#platform';
import { ProjectDirectory } from '#keys';
import { EntitlementKeyRegistry } from '../catalog/entitlement-key-registry.service.js';
import { ProductCatalog } from '../catalog/product-catalog.service.js';
import { EntitlementMutation } from '../domain/public-entitlement.js';
import { EntitlementKeyList, ProductCatalogView, PutProductsDto } from '../dto/catalog.dto.js';
import { OperatorGrantEntitlementDto, OperatorRevokeEntitlementDto } from '../dto/entitlement-mutation.dto.js';
import { operatorRefusalAnswer } from '../grants/manual-entitlement-answers.js';
import { ManualEntitlementService } from '../grants/manual-entitlements.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId')
export class OperatorEntitlementsController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly registry: EntitlementKeyRegistry,
    private readonly catalog: ProductCatalog,
    private readonly manual: ManualEntitlementService,
  ) {}

  @Get('entitlement-keys')
  @ApiOperation({
    operationId: 'adminListEntitlementKeys',
    summary: "The project's entitlement-key registry (keys granted, migrated or named in the catalogue)",
  })
  @ApiOkResponse({ type: EntitlementKeyList })
  async entitlementKeys(@Param('projectId') projectId: string): Promise<EntitlementKeyList> {
    await this.projects.assertExists(projectId);
    return { object: 'list', data: await this.registry.list(projectId) };
  }

  @Put('products')
  @ApiOperation({ operationId: 'adminPutProducts', summary: 'Replace the product catalogue (registers its keys as catalog)' })
  @ApiOkResponse({ type: ProductCatalogView })
  @ApiErrors({ 400: ['missing_required_param'] })
  async putProducts(@Param('projectId') projectId: string, @Body() body: PutProductsDto): Promise<ProductCatalogView> {
    return { object: 'product_catalog', projectId, products: await this.catalog.replace(projectId, body.products) };
  }

  @Get('products')
  @ApiOperation({ operationId: 'adminGetProducts', summary: 'Read the product catalogue' })
  @ApiOkResponse({ type: ProductCatalogView })
  async getProducts(@Param('projectId') projectId: string): Promise<ProductCatalogView> {
    return { object: 'product_catalog', projectId, products: await this.catalog.list(projectId) };
  }

  @Post('customers/:customerId/grant')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adminGrantEntitlement',
    summary: 'Dashboard grant: the same write as the server grant, in the environment named in the body, attributed to the operator',
    description: 'Unknown project or customer: 404 resource_missing.',
  })
  @ApiOkResponse({ type: EntitlementMutation })
  @ApiErrors({ 400: ['missing_required_param'] })
  async grant(
    @Req() req: HttpRequest,
    @Param('projectId') projectId: string,
    @Param('customerId') customerId: string,
    @Body() body: OperatorGrantEntitlementDto,
  ): Promise<EntitlementMutation> {
    await this.projects.assertExists(projectId);
    const { env, ...grant } = body;
    const scope = TenantScopes.operator(projectId, env);
    return this.manual
      .grant(scope, customerId, grant, { actor: 'operator', requestId: requestIdOf(req) })
      .catch((err: unknown) => operatorRefusalAnswer(scope, customerId, err));
  }

  @Post('customers/:customerId/revoke')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adminRevokeEntitlement',
    summary: 'Dashboard revoke: the same write as the server revoke, in the environment named in the body, attributed to the operator',
    description: 'Unknown project or customer: 404 resource_missing.',
  })
  @ApiOkResponse({ type: EntitlementMutation })
  @ApiErrors({ 400: ['missing_required_param'] })
  async revoke(
    @Req() req: HttpRequest,
    @Param('projectId') projectId: string,
    @Param('customerId') customerId: string,
    @Body() body: OperatorRevokeEntitlementDto,
  ): Promise<EntitlementMutation> {
    await this.projects.assertExists(projectId);
    const { env, ...revoke } = body;
    const scope = TenantScopes.operator(projectId, env);
    return this.manual
      .revoke(scope, customerId, revoke, { actor: 'operator', requestId: requestIdOf(req) })
      .catch((err: unknown) => operatorRefusalAnswer(scope, customerId, err));
  }
}
