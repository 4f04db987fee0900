import type { ErrorCode, ErrorCodeOf } from '../openapi/error-codes.js';

export type ErrorType = 'authentication_error' | 'permission_error' | 'invalid_request_error' | 'rate_limit_error' | 'version_error' | 'internal_error';

const STATUS_OF_TYPE: Record<ErrorType, number> = {
  authentication_error: 401,
  permission_error: 403,
  invalid_request_error: 400,
  rate_limit_error: 429,
  version_error: 426,
  internal_error: 500,
};

/**
 * The only error the code throws on purpose. The exception filter turns it into the
 * envelope `{ error: { type, code, message, request_id } }`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    /** A code of the error catalogue (openapi/error-codes.ts). */
    readonly code: ErrorCode,
    message: string,
    /** Additional fields written into the error object (e.g. minVersion and surface on 426). */
    readonly extra?: Record<string, unknown>,
    /** Response headers that belong to this error (e.g. Retry-After on 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  private static of<T extends ErrorType>(type: T, code: ErrorCodeOf<T>, message: string): ApiError {
    return new ApiError(STATUS_OF_TYPE[type], type, code, message);
  }

  static invalidParam(message: string): ApiError {
    return ApiError.of('invalid_request_error', 'invalid_param_value', message);
  }
  static missingParam(message: string): ApiError {
    return ApiError.of('invalid_request_error', 'missing_required_param', message);
  }
  static invalidRequest(code: ErrorCodeOf<'invalid_request_error'>, message: string): ApiError {
    return ApiError.of('invalid_request_error', code, message);
  }
  static authentication(code: ErrorCodeOf<'authentication_error'>, message: string): ApiError {
    return ApiError.of('authentication_error', code, message);
  }
  static permission(code: ErrorCodeOf<'permission_error'>, message: string): ApiError {
    return ApiError.of('permission_error', code, message);
  }
  /** 404 of the operator API: unknown ids, and /admin when it is switched off. */
  static resourceMissing(message: string): ApiError {
    return new ApiError(404, 'invalid_request_error', 'resource_missing', message);
  }
  /** 409: the request conflicts with the resource's current state (e.g. a review already decided). */
  static conflict(code: 'review_already_decided', message: string): ApiError {
    return new ApiError(409, 'invalid_request_error', code, message);
  }
  static rateLimited(retryAfterMs: number, sampleRate: number, message = 'Too many requests; retry later'): ApiError {
    const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new ApiError(429, 'rate_limit_error', 'rate_limited', message, undefined, {
      'Retry-After': String(retryAfterSeconds),
      'X-Service-Sample-Rate': formatSampleRate(sampleRate),
    });
  }
  static sdkVersionUnsupported(minVersion: string, surface: string): ApiError {
    return new ApiError(
      426,
      'version_error',
      'sdk_version_unsupported',
      `This ${surface} client is below the supported floor ${minVersion}; hold events on the device and deliver them after upgrading`,
      { minVersion, surface },
    );
  }
  static internal(): ApiError {
    return ApiError.of('internal_error', 'internal_error', 'An internal error occurred');
  }
}

export function formatSampleRate(rate: number): string {
  const clamped = Math.min(1, Math.max(0, Number.isFinite(rate) ? rate : 0));
  return String(Math.round(clamped * 10000) / 10000);
}
