import type { INestApplication } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { routeTable, type RouteEntry } from '../policy/route-table.js';
import { ERROR_CATALOGUE, type ErrorCodes, mergeErrorCodes, unknownErrorCodes } from './error-codes.js';
import { type DocsReply, REDOC_INIT, docsPage, redocBundle } from './docs-page.js';
import { API_KEY_BEARER, API_KEY_CLIENT_HEADER, API_KEY_HEADER, CONSOLE_SESSION, OPERATOR_BEARER } from './security-schemes.js';

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

/** The 426 body: minVersion and surface inside `error` and at the top level (docs/decisions/426-and-client-versions.md). */
export class VersionErrorEnvelope {
  @ApiProperty({ type: VersionErrorBody })
  error: VersionErrorBody;
  @ApiProperty({ example: '1.4.0' })
  minVersion: string;
  @ApiProperty({ example: 'swift' })
  surface: string;
}

export { API_KEY_BEARER, API_KEY_CLIENT_HEADER, API_KEY_HEADER, CONSOLE_SESSION, OPERATOR_BEARER };

export interface OpenApiOptions {
  /** The operator section is documented: the operator API is on (OPERATOR_TOKEN) and DOCS_OPERATOR=true. */
  operatorApi: boolean;
}

export interface DocsOptions extends OpenApiOptions {
  /** DOCS_ENABLED: `/docs`, `/docs/json` and `/docs/yaml` are served; otherwise they answer 404 like any unknown path. */
  enabled: boolean;
}

/** The document of the application's routes, as served at `/docs/json` (no listener needed). */
export function buildOpenApiDocument(app: INestApplication, options: OpenApiOptions): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Entitlement, Identity and Telemetry Service API')
    .setDescription(
      'Public API v1 (every path is also accepted without the /v1 prefix)' +
        (options.operatorApi ? ' and the operator API under /admin/v1' : '') +
        '. Errors use the envelope { error: { type, code, message, request_id } }; every response carries X-Request-Id.',
    )
    .setVersion('v1')
    // The repository's LICENSE.
    .setLicense('MIT', 'https://spdx.org/licenses/MIT.html')
    // Relative: the document is valid wherever the service is mounted.
    .addServer('/', 'This service')
    // Keys and the operator token are opaque bearer strings, not JWTs (no bearerFormat).
    .addSecurity(API_KEY_BEARER, { type: 'http', scheme: 'bearer', description: 'API key: cd_pub_… or cd_sk_… (opaque, not a JWT)' })
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Service-Api-Key', description: 'API key in the alias header' }, API_KEY_HEADER)
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'Crossdeck-Api-Key', description: 'API key in the alias header, as the published clients spell it' },
      API_KEY_CLIENT_HEADER,
    )
    .addSecurity(OPERATOR_BEARER, { type: 'http', scheme: 'bearer', description: 'OPERATOR_TOKEN of the operator (dashboard) API (opaque, not a JWT)' })
    .addSecurity(CONSOLE_SESSION, {
      type: 'apiKey',
      in: 'cookie',
      name: 'console_session',
      description: 'Console session cookie; changes also send X-CSRF-Token',
    })
    .build();
  const raw = SwaggerModule.createDocument(app, config, { extraModels: [ErrorEnvelope, VersionErrorEnvelope] });
  return polishOpenApiDocument(raw, options, routeDocsByOperation(routeTable(app)));
}

/**
 * `/docs` (a Redoc page), `/docs/json` and `/docs/yaml` when DOCS_ENABLED. The page loads the
 * Redoc bundle copied into dist/ at build time (scripts/copy-docs-assets.mjs); Swagger UI's
 * assets are not used, so swagger-ui-dist is not installed in production (package.json overrides).
 */
export function setupOpenApi(app: INestApplication, options: DocsOptions = { enabled: true, operatorApi: true }): void {
  if (!options.enabled) return;
  const document = buildOpenApiDocument(app, options);
  SwaggerModule.setup('docs', app, document, { ui: false, jsonDocumentUrl: 'docs/json', yamlDocumentUrl: 'docs/yaml' });
  const http = app.getHttpAdapter();
  const page = docsPage(document.info.title);
  const sendPage = (_req: unknown, res: DocsReply) => {
    res.header('Cache-Control', 'no-store');
    // The page runs one same-origin module script; nothing else may load.
    res.header(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:",
    );
    res.type('text/html; charset=utf-8');
    res.send(page);
  };
  http.get('/docs', sendPage); // also /docs/ (the router ignores a trailing slash)
  http.get('/docs/redoc-init.js', (_req: unknown, res: DocsReply) => {
    res.header('Cache-Control', 'no-store');
    res.type('text/javascript; charset=utf-8');
    res.send(REDOC_INIT);
  });
  http.get('/docs/redoc.standalone.js', (_req: unknown, res: DocsReply) => {
    const bundle = redocBundle();
    if (!bundle) {
      res.status(404);
      res.header('Cache-Control', 'no-store');
      res.type('application/json');
      res.send(
        JSON.stringify({
          error: {
            type: 'invalid_request_error',
            code: 'resource_missing',
            message: 'The documentation UI bundle is not installed (npm run build copies it into dist/docs)',
          },
        }),
      );
      return;
    }
    res.header('Cache-Control', 'public, max-age=3600');
    res.type('text/javascript; charset=utf-8');
    res.send(bundle);
  });
}

/** Tag descriptions, in the order a reader meets them: the public API first, the operator API last. */
const TAGS: [string, string][] = [
  ['platform', 'Health and client version manifest'],
  ['config', 'Remote configuration of an app (publishable key)'],
  ['sdk', 'SDK heartbeat and version floor'],
  ['identity', 'Customers: identify, alias, forget'],
  ['trust', 'Client-side trust tier and the trust gate (block lists, owner status, signup gate)'],
  ['entitlements', 'Entitlement reads'],
  ['subscriptions', 'Subscription reads: the state, period, money and dates of each rail subscription'],
  ['server', 'Privileged server endpoints (secret key): grants, revokes, audit'],
  ['telemetry', 'Telemetry and error event ingestion'],
  ['errors', 'Error issue reads (scoped secret keys)'],
  ['purchases', 'Purchase sync: signed store transactions forwarded by apps'],
  ['webhooks', 'Store notifications (card payments, iOS, Android): no API key, each store authenticates its own way'],
  ['releases', 'Release source maps for error symbolication (secret key)'],
  ['migration', 'Bulk user migration (secret key)'],
  ['reporting', 'Read API: workspace projects, apps and coverage (secret or workspace key; the scope per operation)'],
  ['console', 'The operator console: its session cookie (sign-in with OPERATOR_TOKEN, CSRF token for changes)'],
  ['operator', 'Operator (dashboard) API under /admin/v1, authenticated with OPERATOR_TOKEN or the console session cookie'],
];

/** The few numeric fields that may be fractional; every other number of the API is an integer. */
const FRACTIONAL_NUMBERS = new Set(['BucketRuleView.sustained', 'BucketRuleView.burst', 'ThrottledView.sampleRate', 'IdentifyDto.traits']);

const HEADERS = {
  'X-Request-Id': {
    description: 'The request id (`req_` and 24 hex characters); equals `request_id` in an error body',
    schema: { type: 'string', pattern: '^req_[0-9a-f]{24}$' },
  },
  'Cache-Control': { description: '`no-store` on errors and private data; `public, max-age=300` on the version manifest', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds until the bucket has room again', schema: { type: 'integer', minimum: 1 } },
  'X-Service-Sample-Rate': { description: 'Suggested proportional client-side sampling, 0 to 1', schema: { type: 'number', minimum: 0, maximum: 1 } },
  'Idempotent-Replayed': {
    description: '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key and body',
    schema: { type: 'string', enum: ['true'] },
  },
};

type Json = Record<string, any>;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * What a client generator and a reader need beyond what the decorators produce: response
 * headers, integers typed integer, optional SDK header declared once, unique operationIds,
 * every tag declared, the public API before the operator API, and the operator section only
 * when that API is on (with the schemas only it uses).
 */
export function polishOpenApiDocument(document: OpenAPIObject, options: OpenApiOptions, routeDocs = new Map<string, RouteDocs>()): OpenAPIObject {
  const doc = document as unknown as Json;
  const paths: Json = {};
  const entries = Object.entries<Json>(doc.paths ?? {});
  const isOperator = (path: string) => path.startsWith('/admin/') || path.startsWith('/console/');
  // The public API, then the console's session, then /admin.
  const rank = (path: string) => (path.startsWith('/admin/') ? 2 : isOperator(path) ? 1 : 0);
  for (const [path, item] of [...entries].sort(([a], [b]) => rank(a) - rank(b))) {
    if (isOperator(path) && !options.operatorApi) continue;
    // A route's legacy alias paths are accepted but documented once, under the canonical path.
    for (const method of HTTP_METHODS) if (item[method] && routeDocs.get(`${method} ${path}`)?.alias) delete item[method];
    if (HTTP_METHODS.some((method) => item[method])) paths[path] = item;
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
      const route = routeDocs.get(`${method} ${path}`);
      // Public routes and store webhooks take no API key: an explicit empty requirement says so.
      // A public route that checks a credential itself (the console session) declares it.
      if (route && (route.policy === 'public' || route.policy === 'store_webhook') && !operation.security?.length) operation.security = [];
      writeErrorResponses(operation, route?.errorCodes ?? { 500: ['internal_error'] });
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        const headers: Json = { ...(response.headers ?? {}), 'X-Request-Id': header('X-Request-Id'), 'Cache-Control': header('Cache-Control') };
        if (status === '429') Object.assign(headers, { 'Retry-After': header('Retry-After'), 'X-Service-Sample-Rate': header('X-Service-Sample-Rate') });
        if (status === '503') Object.assign(headers, { 'Retry-After': header('Retry-After') });
        if (route?.idempotent && Number(status) < 300) Object.assign(headers, { 'Idempotent-Replayed': header('Idempotent-Replayed') });
        response.headers = headers;
        if (!response.description) response.description = Number(status) < 300 ? 'Success' : 'Error';
      }
    }
  }
  // Explicit ids (`@ApiOperation({ operationId })`) are what generated clients name their
  // methods; a route without one, or a clash, gets one derived from its method and path.
  for (const [path, method, operation] of operations) {
    const id = operation.operationId as string | undefined;
    if (!id || FRAMEWORK_OPERATION_ID.test(id) || (operationIds.get(id) ?? 0) > 1) operation.operationId = derivedOperationId(method, path);
  }

  // Every tag used is declared, in reading order.
  const used = new Set(operations.flatMap(([, , operation]) => (operation.tags ?? []) as string[]));
  const described = new Map(TAGS);
  const order = [...TAGS.map(([name]) => name), ...[...used].filter((name) => !described.has(name)).sort()];
  doc.tags = order.filter((name) => used.has(name)).map((name) => ({ name, description: described.get(name) ?? name }));

  if (!options.operatorApi && doc.components.securitySchemes) {
    delete doc.components.securitySchemes[OPERATOR_BEARER];
    delete doc.components.securitySchemes[CONSOLE_SESSION];
  }
  pruneUnusedSchemas(doc);
  integerNumbers(doc);
  return document;
}

/** What the document needs from a route's declarations. */
export interface RouteDocs {
  /** Those its policy implies and those it declares. */
  errorCodes: ErrorCodes;
  idempotent: boolean;
  /** The route's policy kind (`public`, `api_key`, `operator`, `store_webhook`). */
  policy?: string;
  /** A legacy alias path of a route mounted on several paths (its first path is the canonical one). */
  alias?: boolean;
}

/** Nest's default operationId (`IdentifyController_identify`, `…_identify[1]`): not a name for a client. */
const FRAMEWORK_OPERATION_ID = /^[A-Za-z0-9]*Controller_/;

/** `post /v1/server/customers/{customerId}/grant` → `postServerCustomersByCustomerIdGrant`. */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, '/')
    .replace(/\{(\w+)\}/g, 'by_$1')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
}

/** Every operation (`get /v1/x/{id}`) with what its route declares. */
export function routeDocsByOperation(routes: RouteEntry[]): Map<string, RouteDocs> {
  const byOperation = new Map<string, RouteDocs>();
  const unknown: string[] = [];
  for (const route of routes) {
    const docs: RouteDocs = {
      errorCodes: mergeErrorCodes(impliedErrorCodes(route), route.errorCodes),
      idempotent: route.idempotent,
      policy: route.policies[0]?.kind,
    };
    unknown.push(...unknownErrorCodes(docs.errorCodes).map((code) => `${route.handler}: ${code}`));
    route.paths.forEach((path, index) =>
      byOperation.set(`${route.method.toLowerCase()} ${path.replace(/:(\w+)/g, '{$1}')}`, index === 0 ? docs : { ...docs, alias: true }),
    );
  }
  if (unknown.length > 0) throw new Error(`@ApiErrors() declares codes the error catalogue does not know: ${unknown.join('; ')}`);
  return byOperation;
}

/** What every route of its kind can answer, whatever its handler does. */
export function impliedErrorCodes(route: RouteEntry): ErrorCodes {
  const implied: ErrorCodes[] = [{ 500: ['internal_error'] }];
  const [policy] = route.policies;
  // A body that is not JSON, too large, too deep or with text PostgreSQL cannot store.
  // A declared Content-Length over the route's limit is refused before anything is read: 413.
  // A DELETE may carry a body too, and it is read (and refused) like any other.
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) implied.push({ 400: ['invalid_param_value'], 413: ['invalid_param_value'] });
  if (policy?.kind === 'api_key') {
    implied.push({ 401: ['missing_api_key', 'invalid_api_key', 'key_revoked'] });
    if (policy.kinds.includes('publishable')) implied.push({ 403: ['origin_not_allowed', 'bundle_id_not_allowed', 'package_name_not_allowed'] });
    if (policy.scopes?.length) implied.push({ 403: ['insufficient_scope'] });
  } else if (policy?.kind === 'operator') {
    // 429: the client address's failed bearer authentications used up their bucket.
    implied.push({ 401: ['invalid_operator_token'], 403: ['csrf_token_invalid'], 404: ['resource_missing'], 429: ['rate_limited'] });
  } else if (policy?.kind === 'store_webhook') {
    implied.push({ 404: ['resource_missing'] });
  }
  if (route.rateLimit) implied.push({ 429: ['rate_limited'] });
  if (route.idempotent) implied.push({ 400: ['invalid_param_value', 'idempotency_key_in_use'], 429: ['rate_limited'] });
  // The database unreachable: 503 with Retry-After (health and the version manifest never read it).
  if (policy?.kind !== 'public') implied.push({ 503: ['internal_error'] });
  return mergeErrorCodes(...implied);
}

/** One response per error status: its type, its codes, and an example body per code. */
function writeErrorResponses(operation: Json, codes: ErrorCodes): void {
  const responses: Json = (operation.responses ??= {});
  for (const status of Object.keys(codes)
    .map(Number)
    .sort((a, b) => a - b)) {
    const list = codes[status] ?? [];
    if (list.length === 0) continue;
    const types = [...new Set(list.map((code) => ERROR_CATALOGUE[status][code].type))];
    const examples: Json = {};
    for (const code of list) {
      const { type, example } = ERROR_CATALOGUE[status][code];
      const error: Json = { type, code, message: example, request_id: 'req_3f9a0c1d2e4b5a6978877665' };
      const value: Json = status === 426 ? { error: { ...error, minVersion: '1.4.0', surface: 'swift' }, minVersion: '1.4.0', surface: 'swift' } : { error };
      examples[code] = { summary: code, value };
    }
    responses[status] = {
      description: `${types.join(', ')}: ${list.map((code) => `\`${code}\``).join(', ')}`,
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${status === 426 ? 'VersionErrorEnvelope' : 'ErrorEnvelope'}` },
          examples,
        },
      },
    };
  }
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
