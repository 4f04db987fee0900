import { applyDecorators } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { ApiProperty, ApiResponse, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

export class ErrorBody {
  @ApiProperty({ example: 'invalid_request_error', enum: ['authentication_error', 'permission_error', 'invalid_request_error', 'rate_limit_error', 'version_error', 'internal_error'] })
  type: string;
  @ApiProperty({ example: 'invalid_param_value' })
  code: string;
  @ApiProperty({ example: 'events[3].name must be shorter than or equal to 128 characters' })
  message: string;
  @ApiProperty({ example: 'req_3f9a0c1d2e4b5a6978877665' })
  request_id: string;
}

export class ErrorEnvelope {
  @ApiProperty({ type: ErrorBody })
  error: ErrorBody;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request_error (missing_required_param, invalid_param_value, ...)',
  401: 'authentication_error (missing_api_key, invalid_api_key, key_revoked, identity_token_invalid)',
  403: 'permission_error (origin_not_allowed, bundle_id_not_allowed, package_name_not_allowed, env_mismatch, insufficient_scope)',
  404: 'invalid_request_error / resource_missing',
  426: 'version_error / sdk_version_unsupported (carries minVersion and surface)',
  429: 'rate_limit_error / rate_limited (Retry-After, X-Service-Sample-Rate)',
  500: 'internal_error',
};

/** Documents the error responses of an endpoint with the shared envelope. */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ...[...new Set([...statuses, 500])].map((status) =>
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'error', type: ErrorEnvelope }),
    ),
  );
}

export const API_KEY_BEARER = 'apiKeyBearer';
export const API_KEY_HEADER = 'apiKeyHeader';
export const OPERATOR_BEARER = 'operatorToken';

export function setupOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Entitlement, Identity and Telemetry Service API')
    .setDescription(
      'Public API v1 (every path is also accepted without the /v1 prefix) and the operator API under /admin/v1. ' +
        'Errors use the envelope { error: { type, code, message, request_id } }; every response carries X-Request-Id.',
    )
    .setVersion('v1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key: cd_pub_… or cd_sk_…' }, API_KEY_BEARER)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Service-Api-Key', description: 'API key in the alias header' }, API_KEY_HEADER)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'OPERATOR_TOKEN of the operator (dashboard) API' }, OPERATOR_BEARER)
    .addTag('platform', 'Health and client version manifest')
    .addTag('operator', 'Operator (dashboard) API under /admin/v1, authenticated with OPERATOR_TOKEN')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
}
