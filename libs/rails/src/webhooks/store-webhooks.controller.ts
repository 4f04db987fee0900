import { Controller, Header, Headers, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, RequestId, StoreWebhook, rawBodyOf, type HttpRequest } from '#platform';
import { AndroidWebhookService } from '../android/android-webhook.service.js';
import { CardWebhookService } from '../card/card-webhook.service.js';
import { IosWebhookService } from '../ios/ios-webhook.service.js';
import { RailNotificationView } from '../notifications/rail-notification.view.js';
import { WebhookGate } from './webhook-gate.service.js';

/**
 * Inbound store notifications. No API key: each route declares @StoreWebhook(rail), whose gate
 * (WebhookGate, registered by StoreNotificationsModule) answers 404 for an unknown project or
 * a rail not enabled before any byte of the body is read; the body then reaches the handler
 * raw, and each rail authenticates it its own way (signature, JWS, push token) in its service.
 */
@ApiTags('webhooks')
@Controller('v1/webhooks')
export class StoreWebhooksController {
  constructor(
    private readonly card: CardWebhookService,
    private readonly android: AndroidWebhookService,
    private readonly ios: IosWebhookService,
    private readonly gate: WebhookGate,
  ) {}

  @Post('ios_store/:projectId')
  @StoreWebhook('ios_store')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'receiveIosStoreNotification',
    summary: 'iOS store App Store Server Notifications V2 ({ signedPayload }), verified like purchase sync',
    description:
      "404 resource_missing, 400 invalid_param_value (no signedPayload string, or not a notification), 400 invalid_signature (JWS, chain or marker OIDs fail). Another app's authentic notification: 200 rejected.",
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['signedPayload'],
      properties: { signedPayload: { type: 'string', description: 'JWS (ES256, x5c chain) of the ResponseBodyV2DecodedPayload' } },
    },
  })
  @ApiOkResponse({ type: RailNotificationView })
  @ApiErrors({ 400: ['invalid_signature'] })
  iosStore(@Req() req: HttpRequest, @Param('projectId') projectId: string, @RequestId() requestId: string): Promise<RailNotificationView> {
    return this.ios.receive(projectId, this.gate.settingsOf(req), rawBodyOf(req), requestId);
  }

  @Post('card_payments/:projectId')
  @StoreWebhook('card_payments')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'receiveCardPaymentsWebhook',
    summary: "Card-payment processor webhook (Stripe events), verified with the project's webhook secrets",
    description:
      '404 resource_missing (unknown project or rail not enabled), 400 invalid_param_value (not JSON, or not an event), 400 invalid_signature (Stripe-Signature fails against every secret, or none configured).',
  })
  @ApiBody({
    schema: {
      type: 'object',
      description: "The processor's event as sent ({ id, object: 'event', type, created, livemode, data: { object } }); the raw bytes are signed",
      required: ['id', 'type', 'data'],
      properties: {
        id: { type: 'string', example: 'evt_1' },
        object: { type: 'string', enum: ['event'] },
        type: { type: 'string', example: 'customer.subscription.updated' },
        created: { type: 'integer', description: 'Unix seconds' },
        livemode: { type: 'boolean' },
        data: { type: 'object', required: ['object'], properties: { object: { type: 'object', additionalProperties: true } } },
      },
      additionalProperties: true,
    },
  })
  @ApiHeader({ name: 'Stripe-Signature', required: true, description: 't=…,v1=… (HMAC-SHA256 over "{t}.{raw body}")' })
  @ApiOkResponse({ type: RailNotificationView })
  @ApiErrors({ 400: ['invalid_signature'] })
  cardPayments(
    @Req() req: HttpRequest,
    @Param('projectId') projectId: string,
    @Headers('stripe-signature') signature: string | undefined,
    @RequestId() requestId: string,
  ): Promise<RailNotificationView> {
    return this.card.receive(projectId, rawBodyOf(req), signature, requestId, this.gate.settingsOf(req));
  }

  @Post('android_store/:projectId')
  @StoreWebhook('android_store')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'receiveAndroidStoreNotification',
    summary: 'Android store real-time developer notification (Pub/Sub push); the purchase is read from the Publisher API',
    description:
      '404 resource_missing, 400 invalid_param_value (not a push envelope or not a developer notification), 400 invalid_signature (token), 503 internal_error / rail_unavailable (the Publisher API could not be read; Pub/Sub retries).',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['message'],
      properties: {
        message: {
          type: 'object',
          required: ['data', 'messageId'],
          properties: {
            data: { type: 'string', description: 'base64 of the DeveloperNotification JSON' },
            messageId: { type: 'string' },
            publishTime: { type: 'string' },
          },
        },
        subscription: { type: 'string' },
      },
    },
  })
  @ApiQuery({ name: 'token', required: true, type: String, description: "The project's pushToken from RAIL_SECRETS_FILE" })
  @ApiOkResponse({ type: RailNotificationView })
  @ApiErrors({ 400: ['invalid_signature'], 503: ['rail_unavailable'] })
  androidStore(@Req() req: HttpRequest, @Param('projectId') projectId: string, @RequestId() requestId: string): Promise<RailNotificationView> {
    const { token: raw } = req.query as Record<string, unknown>;
    const token = typeof raw === 'string' ? raw : undefined;
    return this.android.receive(projectId, this.gate.settingsOf(req), rawBodyOf(req), token, requestId);
  }
}
