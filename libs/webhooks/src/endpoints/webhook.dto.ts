import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { DELIVERY_STATUSES, ENDPOINT_STATUSES, WEBHOOK_EVENT_TYPES } from '../domain/webhook-rules.js';

const EVENT_TYPE_CHOICES = ['*', ...WEBHOOK_EVENT_TYPES];

export class CreateWebhookEndpointDto {
  @ApiProperty({ example: 'https://api.example.com/webhooks/entitlements', description: 'https, public addresses only' })
  @IsString()
  @Length(1, 2048)
  url: string;

  @ApiProperty({ enum: ['sandbox', 'production'] })
  @IsIn(['sandbox', 'production'])
  env: 'sandbox' | 'production';

  @ApiPropertyOptional({ type: [String], enum: EVENT_TYPE_CHOICES, default: ['*'] })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPE_CHOICES.length)
  @IsIn(EVENT_TYPE_CHOICES, { each: true })
  eventTypes?: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;
}

export class PatchWebhookEndpointDto {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: EVENT_TYPE_CHOICES })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPE_CHOICES.length)
  @IsIn(EVENT_TYPE_CHOICES, { each: true })
  eventTypes?: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({ enum: ['enabled', 'disabled'] })
  @IsOptional()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';
}

export class WebhookEndpointView {
  @ApiProperty({ example: 'webhook_endpoint' }) object: 'webhook_endpoint';
  @ApiProperty({ example: 'we_3f9a0c1d2e4b5a6978c0d1e2' }) id: string;
  @ApiProperty() projectId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: [String] }) eventTypes: string[];
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: ENDPOINT_STATUSES }) status: string;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiPropertyOptional({ description: 'Signing secret: only in the answers of creation and rotation', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret?: string;
  @ApiPropertyOptional({ description: 'Unix seconds until which the previous secret still signs (rotation answer only)' })
  previousSecretExpiresAt?: number;
}

export class WebhookEndpointList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [WebhookEndpointView] }) data: WebhookEndpointView[];
}

export class WebhookEndpointDeleted {
  @ApiProperty({ example: 'webhook_endpoint' }) object: 'webhook_endpoint';
  @ApiProperty() id: string;
  @ApiProperty({ example: true }) deleted: true;
}

export class WebhookDeliveryView {
  @ApiProperty({ example: 'webhook_delivery' }) object: 'webhook_delivery';
  @ApiProperty({ example: 'wd_0f1e2d3c4b5a69788796a5b4c3d2e1f0' }) id: string;
  @ApiProperty() endpointId: string;
  @ApiProperty({ example: 'evt_k3j2h1g0f9e8d7c6b5a4z3y2' }) eventId: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES }) eventType: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty({ type: 'integer' }) attempts: number;
  @ApiProperty({ type: 'integer', nullable: true }) lastStatusCode: number | null;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds' }) nextAttemptAt: number | null;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds' }) succeededAt: number | null;
}

export class WebhookDeliveryList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [WebhookDeliveryView] }) data: WebhookDeliveryView[];
  @ApiProperty() hasMore: boolean;
}
