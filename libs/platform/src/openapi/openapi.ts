import { applyDecorators } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse, DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export class ErrorBody {
  @ApiProperty({
    example: 'invalid_request_error',
    enum: ['authentication_error', 'permission_error', 'invalid_request_error', 'rate_limit_error', 'version_error', 'internal_error'],
  })
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

export class VersionErrorBody extends ErrorBody {
  @ApiPropertyOptional({ example: '1.4.0', description: 'The supported floor of this client surface' })
  minVersion: string;
  @ApiPropertyOptional({ example: 'swift', description: 'The client surface the floor applies to' })
  surface: string;
}

/** The 426 body: minVersion and surface inside `error` and at the top level (docs/decisions.md). */
export class VersionErrorEnvelope {
  @ApiProperty({ type: VersionErrorBody })
  error: VersionErrorBody;
  @ApiProperty({ example: '1.4.0' })
  minVersion: string;
  @ApiProperty({ example: 'swift' })
  surface: string;
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
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'error', type: status === 426 ? VersionErrorEnvelope : ErrorEnvelope }),
    ),
  );
}

export const API_KEY_BEARER = 'apiKeyBearer';
export const API_KEY_HEADER = 'apiKeyHeader';
/** The clients' spelling of the alias header (Crossdeck-Api-Key); accepted wherever Service-Api-Key is. */
export const API_KEY_CLIENT_HEADER = 'apiKeyClientHeader';
export const OPERATOR_BEARER = 'operatorToken';

export interface OpenApiOptions {
  /** The operator API is on (OPERATOR_TOKEN set): only then is its section documented. */
  operatorApi: boolean;
}

export function setupOpenApi(app: INestApplication, options: OpenApiOptions = { operatorApi: true }): void {
  const config = new DocumentBuilder()
    .setTitle('Entitlement, Identity and Telemetry Service API')
    .setDescription(
      'Public API v1 (every path is also accepted without the /v1 prefix)' +
        (options.operatorApi ? ' and the operator API under /admin/v1' : '') +
        '. Errors use the envelope { error: { type, code, message, request_id } }; every response carries X-Request-Id.',
    )
    .setVersion('v1')
    // Keys and the operator token are opaque bearer strings, not JWTs (no bearerFormat).
    .addSecurity(API_KEY_BEARER, { type: 'http', scheme: 'bearer', description: 'API key: cd_pub_… or cd_sk_… (opaque, not a JWT)' })
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Service-Api-Key', description: 'API key in the alias header' }, API_KEY_HEADER)
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'Crossdeck-Api-Key', description: 'API key in the alias header, as the published clients spell it' },
      API_KEY_CLIENT_HEADER,
    )
    .addSecurity(OPERATOR_BEARER, { type: 'http', scheme: 'bearer', description: 'OPERATOR_TOKEN of the operator (dashboard) API (opaque, not a JWT)' })
    .build();
  const document = polishOpenApiDocument(SwaggerModule.createDocument(app, config), options);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
}

/** Tag descriptions, in the order a reader meets them: the public API first, the operator API last. */
const TAGS: [string, string][] = [
  ['platform', 'Health and client version manifest'],
  ['config', 'Remote configuration of an app (publishable key)'],
  ['sdk', 'SDK heartbeat and version floor'],
  ['identity', 'Customers: identify, alias, forget'],
  ['trust', 'Client-side trust tier'],
  ['entitlements', 'Entitlement reads'],
  ['server', 'Privileged server endpoints (secret key): grants, revokes, audit'],
  ['telemetry', 'Telemetry and error event ingestion'],
  ['errors', 'Error issue reads (scoped secret keys)'],
  ['purchases', 'Purchase sync: signed store transactions forwarded by apps'],
  ['webhooks', 'Store notifications (card payments, iOS, Android): no API key, each store authenticates its own way'],
  ['releases', 'Release source maps for error symbolication (secret key)'],
  ['migration', 'Bulk user migration (secret key)'],
  ['operator', 'Operator (dashboard) API under /admin/v1, authenticated with OPERATOR_TOKEN'],
];

/** The few numeric fields that may be fractional; every other number of the API is an integer. */
const FRACTIONAL_NUMBERS = new Set(['BucketRuleView.sustained', 'BucketRuleView.burst', 'ThrottledView.sampleRate']);

const HEADERS = {
  'X-Request-Id': {
    description: 'The request id (`req_` and 24 hex characters); equals `request_id` in an error body',
    schema: { type: 'string', pattern: '^req_[0-9a-f]{24}$' },
  },
  'Cache-Control': { description: '`no-store` on errors and private data; `public, max-age=300` on the version manifest', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds until the bucket has room again', schema: { type: 'integer', minimum: 1 } },
  'X-Service-Sample-Rate': { description: 'Suggested proportional client-side sampling, 0 to 1', schema: { type: 'number', minimum: 0, maximum: 1 } },
};

type Json = Record<string, any>;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * What a client generator and a reader need beyond what the decorators produce: response
 * headers, integers typed integer, optional SDK header declared once, unique operationIds,
 * every tag declared, the public API before the operator API, and the operator section only
 * when that API is on (with the schemas only it uses).
 */
export function polishOpenApiDocument(document: OpenAPIObject, options: OpenApiOptions): OpenAPIObject {
  const doc = document as unknown as Json;
  const paths: Json = {};
  const entries = Object.entries<Json>(doc.paths ?? {});
  const isOperator = (path: string) => path.startsWith('/admin/');
  for (const [path, item] of [...entries.filter(([p]) => !isOperator(p)), ...entries.filter(([p]) => isOperator(p))]) {
    if (isOperator(path) && !options.operatorApi) continue;
    paths[path] = item;
  }
  doc.paths = paths;

  doc.components ??= {};
  doc.components.headers = { ...(doc.components.headers ?? {}), ...HEADERS };
  const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
  const operationIds = new Map<string, number>();
  const operations: [string, string, Json][] = [];
  for (const [path, item] of Object.entries<Json>(paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      operations.push([path, method, operation]);
      if (operation.operationId) operationIds.set(operation.operationId, (operationIds.get(operation.operationId) ?? 0) + 1);
      // Header parameters: one per name (case-insensitive); the explicitly declared one wins; the SDK header is optional.
      const seen = new Map<string, Json>();
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in !== 'header') continue;
        const key = String(parameter.name).toLowerCase();
        const previous = seen.get(key);
        if (!previous || (parameter.description && !previous.description)) seen.set(key, parameter);
      }
      operation.parameters = ((operation.parameters ?? []) as Json[]).filter((p) => p.in !== 'header' || seen.get(String(p.name).toLowerCase()) === p);
      for (const parameter of operation.parameters as Json[]) {
        if (parameter.in === 'header' && String(parameter.name).toLowerCase() === 'service-sdk-version') parameter.required = false;
      }
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        const headers: Json = { ...(response.headers ?? {}), 'X-Request-Id': header('X-Request-Id'), 'Cache-Control': header('Cache-Control') };
        if (status === '429') Object.assign(headers, { 'Retry-After': header('Retry-After'), 'X-Service-Sample-Rate': header('X-Service-Sample-Rate') });
        response.headers = headers;
        if (!response.description) response.description = Number(status) < 300 ? 'Success' : 'Error';
      }
    }
  }
  for (const [path, method, operation] of operations) {
    if (!operation.operationId || (operationIds.get(operation.operationId) ?? 0) > 1) {
      operation.operationId = `${method}${path
        .replace(/\{(\w+)\}/g, 'By_$1')
        .split(/[^A-Za-z0-9_]+/)
        .filter(Boolean)
        .map((part) => part[0].toUpperCase() + part.slice(1))
        .join('')}`;
    }
  }

  // Every tag used is declared, in reading order.
  const used = new Set(operations.flatMap(([, , operation]) => (operation.tags ?? []) as string[]));
  const described = new Map(TAGS);
  const order = [...TAGS.map(([name]) => name), ...[...used].filter((name) => !described.has(name)).sort()];
  doc.tags = order.filter((name) => used.has(name)).map((name) => ({ name, description: described.get(name) ?? name }));

  if (!options.operatorApi && doc.components.securitySchemes) delete doc.components.securitySchemes[OPERATOR_BEARER];
  pruneUnusedSchemas(doc);
  integerNumbers(doc);
  return document;
}

/** Drops component schemas no remaining operation reaches (the operator API's, when it is off). */
function pruneUnusedSchemas(doc: Json): void {
  const schemas: Json = doc.components?.schemas ?? {};
  const reached = new Set<string>();
  const pending: unknown[] = [doc.paths];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      pending.push(...value);
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
          const name = child.slice('#/components/schemas/'.length);
          if (!reached.has(name)) {
            reached.add(name);
            pending.push(schemas[name]);
          }
        } else {
          pending.push(child);
        }
      }
    }
  }
  for (const name of Object.keys(schemas)) if (!reached.has(name)) delete schemas[name];
}

/** `number` becomes `integer` everywhere except the fractional fields listed above. */
function integerNumbers(doc: Json): void {
  const visit = (schema: Json | undefined, name: string) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.type === 'number' && !FRACTIONAL_NUMBERS.has(name)) schema.type = 'integer';
    for (const [property, child] of Object.entries<Json>(schema.properties ?? {})) visit(child, `${name.split('.')[0]}.${property}`);
    if (schema.items) visit(schema.items, name);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') visit(schema.additionalProperties, name);
    for (const part of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) visit(part, name);
  };
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) visit(schema, name);
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Json | undefined;
      for (const parameter of (operation?.parameters ?? []) as Json[]) visit(parameter.schema, `param.${parameter.name}`);
      for (const media of Object.values<Json>(operation?.requestBody?.content ?? {})) visit(media.schema, 'body');
    }
  }
}
