import type { ErrorType } from '../errors/api-error.js';

/** Error codes an endpoint answers, per HTTP status. */
export type ErrorCodes = Partial<Record<number, readonly ErrorCode[]>>;

interface ErrorCodeDoc {
  type: ErrorType;
  /** A message as the service writes it, for the document's example. */
  example: string;
}

/**
 * Every (status, code) the API answers, with its type and an example message: the source of
 * the OpenAPI error descriptions and examples. A code an endpoint declares that is not here
 * stops the document from being built.
 */
const CATALOGUE = {
  400: {
    missing_required_param: { type: 'invalid_request_error', example: 'userId is required' },
    invalid_param_value: { type: 'invalid_request_error', example: 'events[3].name must be shorter than or equal to 128 characters' },
    missing_customer: { type: 'invalid_request_error', example: 'One customer hint is required: customerId, userId or anonymousId' },
    invalid_customer: { type: 'invalid_request_error', example: 'customerId must start with cus_' },
    invalid_release: { type: 'invalid_request_error', example: 'release must be 1 to 64 characters from letters, digits, ".", "_" and "-"' },
    idempotency_key_in_use: { type: 'invalid_request_error', example: 'This Idempotency-Key was already used with a different request body' },
    invalid_signature: { type: 'invalid_request_error', example: 'The notification could not be authenticated: signature mismatch' },
  },
  401: {
    missing_api_key: { type: 'authentication_error', example: 'No API key provided' },
    invalid_api_key: { type: 'authentication_error', example: 'Invalid API key' },
    key_revoked: { type: 'authentication_error', example: 'This API key has been revoked' },
    identity_token_invalid: { type: 'authentication_error', example: 'idToken failed verification (signature, issuer, audience, expiry or subject)' },
    invalid_operator_token: { type: 'authentication_error', example: 'Missing or invalid operator token' },
  },
  403: {
    origin_not_allowed: { type: 'permission_error', example: "The request Origin is not in this app's allowed origins" },
    bundle_id_not_allowed: { type: 'permission_error', example: "X-Service-Bundle-Id does not match this app's bundle id" },
    package_name_not_allowed: { type: 'permission_error', example: "X-Service-Package-Name does not match this app's package name" },
    env_mismatch: { type: 'permission_error', example: 'The request declares environment "production" but the API key belongs to "sandbox"' },
    insufficient_scope: { type: 'permission_error', example: 'This API key lacks the scope required by this endpoint: errors:read' },
    project_not_allowed: { type: 'permission_error', example: 'This API key cannot read project proj_8fJ2kQ0000000000000000' },
    csrf_token_invalid: { type: 'permission_error', example: 'A change made with the console session cookie needs its X-CSRF-Token header' },
  },
  404: {
    resource_missing: { type: 'invalid_request_error', example: 'No such resource: GET /admin/v1/projects/prj_0000000000000000' },
  },
  409: {
    review_already_decided: { type: 'invalid_request_error', example: 'Merge review mrev_3kTq9Vx2LmN8pR4sW7yZ1aBc was already approved' },
  },
  413: {
    invalid_param_value: { type: 'invalid_request_error', example: 'Request body exceeds the 64 KiB limit of this endpoint' },
  },
  408: {
    request_timeout: { type: 'invalid_request_error', example: 'The request was not received in time' },
  },
  426: {
    sdk_version_unsupported: {
      type: 'version_error',
      example: 'This swift client is below the supported floor 1.4.0; hold events on the device and deliver them after upgrading',
    },
  },
  429: {
    rate_limited: { type: 'rate_limit_error', example: 'Too many requests; retry later' },
  },
  500: {
    internal_error: { type: 'internal_error', example: 'An internal error occurred' },
  },
  503: {
    internal_error: { type: 'internal_error', example: 'The service is temporarily unavailable; retry later' },
    rail_unavailable: { type: 'internal_error', example: 'The android API could not be read; retry later' },
    upload_capacity: { type: 'internal_error', example: 'Too many source-map uploads on this server; retry later' },
  },
} as const satisfies Record<number, Record<string, ErrorCodeDoc>>;
export const ERROR_CATALOGUE: Record<number, Record<string, ErrorCodeDoc>> = CATALOGUE;

type Catalogue = typeof CATALOGUE;
type CatalogueEntries = {
  [S in keyof Catalogue]: {
    [C in keyof Catalogue[S]]: { code: C; type: Catalogue[S][C] extends ErrorCodeDoc ? Catalogue[S][C]['type'] : never };
  }[keyof Catalogue[S]];
}[keyof Catalogue];
/** Every error code of the catalogue: `new ApiError(..., 'no_such_code', ...)` does not compile. */
export type ErrorCode = CatalogueEntries['code'] & string;
/** The catalogue's codes of one error type (e.g. the codes an authentication error may carry). */
export type ErrorCodeOf<T extends ErrorType> = Extract<CatalogueEntries, { type: T }>['code'] & string;

export const ROUTE_ERROR_CODES = 'platform:error-codes';

/**
 * Declares the error codes an endpoint answers beyond those its route policy, rate limit,
 * idempotency and body imply (see impliedErrorCodes): the document lists, per error status,
 * exactly these codes with an example each. Declarations on one handler add up.
 */
export function ApiErrors(codes: ErrorCodes = {}): MethodDecorator {
  return (_target: object, _key: string | symbol, descriptor: PropertyDescriptor) => {
    const handler = descriptor.value as object;
    Reflect.defineMetadata(ROUTE_ERROR_CODES, mergeErrorCodes(Reflect.getMetadata(ROUTE_ERROR_CODES, handler) ?? {}, codes), handler);
    return descriptor;
  };
}

/** The union of several declarations, codes in first-seen order. */
export function mergeErrorCodes(...declarations: ErrorCodes[]): ErrorCodes {
  const merged: Record<number, ErrorCode[]> = {};
  for (const declaration of declarations) {
    for (const [status, codes] of Object.entries(declaration)) {
      const list = (merged[Number(status)] ??= []);
      for (const code of codes ?? []) if (!list.includes(code)) list.push(code);
    }
  }
  return merged;
}

/** Codes of `declared` that the catalogue does not know, as `status code` strings. */
export function unknownErrorCodes(declared: ErrorCodes): string[] {
  return Object.entries(declared).flatMap(([status, codes]) =>
    (codes ?? []).filter((code) => !ERROR_CATALOGUE[Number(status)]?.[code]).map((code) => `${status} ${code}`),
  );
}
