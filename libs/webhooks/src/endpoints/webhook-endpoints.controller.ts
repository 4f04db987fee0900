import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator, RequestId } from '#platform';
import { DELIVERY_STATUSES } from '../domain/webhook-rules.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import {
  CreateWebhookEndpointDto,
  PatchWebhookEndpointDto,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookEndpointDeleted,
  WebhookEndpointList,
  WebhookEndpointView,
} from './webhook.dto.js';

/** Outbound webhooks of the operator API (docs/webhooks.md). */
@ApiTags('operator')
@Operator()
@Controller('admin/v1')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Post('projects/:projectId/webhook-endpoints')
  @ApiOperation({ operationId: 'adminCreateWebhookEndpoint', summary: 'Register a webhook endpoint (its signing secret is shown only here)' })
  @ApiCreatedResponse({ type: WebhookEndpointView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'] })
  create(@Param('projectId') projectId: string, @Body() body: CreateWebhookEndpointDto, @RequestId() requestId: string): Promise<WebhookEndpointView> {
    return this.endpoints.create(projectId, body, requestId);
  }

  @Get('projects/:projectId/webhook-endpoints')
  @ApiOperation({ operationId: 'adminListWebhookEndpoints', summary: "List a project's webhook endpoints (without secrets)" })
  @ApiQuery({ name: 'env', required: false, enum: ['sandbox', 'production'] })
  @ApiOkResponse({ type: WebhookEndpointList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  list(@Param('projectId') projectId: string, @Query('env') env?: string): Promise<WebhookEndpointList> {
    return this.endpoints.list(projectId, env);
  }

  @Get('webhook-endpoints/:endpointId')
  @ApiOperation({ operationId: 'adminGetWebhookEndpoint', summary: 'Read a webhook endpoint' })
  @ApiOkResponse({ type: WebhookEndpointView })
  get(@Param('endpointId') endpointId: string): Promise<WebhookEndpointView> {
    return this.endpoints.get(endpointId);
  }

  @Patch('webhook-endpoints/:endpointId')
  @ApiOperation({ operationId: 'adminUpdateWebhookEndpoint', summary: 'Change the url, event types, description or status of a webhook endpoint' })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  patch(@Param('endpointId') endpointId: string, @Body() body: PatchWebhookEndpointDto, @RequestId() requestId: string): Promise<WebhookEndpointView> {
    return this.endpoints.patch(endpointId, body, requestId);
  }

  @Delete('webhook-endpoints/:endpointId')
  @ApiOperation({ operationId: 'adminDeleteWebhookEndpoint', summary: 'Delete a webhook endpoint; its pending deliveries are cancelled' })
  @ApiOkResponse({ type: WebhookEndpointDeleted })
  delete(@Param('endpointId') endpointId: string, @RequestId() requestId: string): Promise<WebhookEndpointDeleted> {
    return this.endpoints.delete(endpointId, requestId);
  }

  @Post('webhook-endpoints/:endpointId/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminRotateWebhookSecret', summary: 'Rotate the signing secret (new one shown once; the old one also signs for 24 h)' })
  @ApiOkResponse({ type: WebhookEndpointView })
  rotate(@Param('endpointId') endpointId: string, @RequestId() requestId: string): Promise<WebhookEndpointView> {
    return this.endpoints.rotate(endpointId, requestId);
  }

  @Post('webhook-endpoints/:endpointId/test')
  @HttpCode(202)
  @ApiOperation({ operationId: 'adminSendTestWebhook', summary: 'Queue a test event to this endpoint only' })
  @ApiAcceptedResponse({ type: WebhookDeliveryView })
  test(@Param('endpointId') endpointId: string, @RequestId() requestId: string): Promise<WebhookDeliveryView> {
    return this.endpoints.test(endpointId, requestId);
  }

  @Get('webhook-endpoints/:endpointId/deliveries')
  @ApiOperation({ operationId: 'adminListWebhookDeliveries', summary: "List an endpoint's deliveries, newest first" })
  @ApiQuery({ name: 'status', required: false, enum: DELIVERY_STATUSES })
  @ApiQuery({ name: 'limit', required: false, type: 'integer', description: '1 to 100 (default 20)' })
  @ApiQuery({ name: 'startingAfter', required: false, description: 'A delivery id: the page after it' })
  @ApiOkResponse({ type: WebhookDeliveryList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  deliveries(
    @Param('endpointId') endpointId: string,
    @Query('status') status?: string,
    @Query('limit') limit?: string,
    @Query('startingAfter') startingAfter?: string,
  ): Promise<WebhookDeliveryList> {
    return this.endpoints.deliveries(endpointId, { status, limit, startingAfter });
  }

  @Post('webhook-deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({ operationId: 'adminRetryWebhookDelivery', summary: 'Queue a delivery again now (any status but pending)' })
  @ApiAcceptedResponse({ type: WebhookDeliveryView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  retry(@Param('deliveryId') deliveryId: string, @RequestId() requestId: string): Promise<WebhookDeliveryView> {
    return this.endpoints.retry(deliveryId, requestId);
  }
}
