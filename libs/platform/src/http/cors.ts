import { type HttpRequest, type HttpResponse, setResponseHeader } from './http-types.js';

export const CORS_ALLOW_METHODS = 'GET, POST, DELETE, OPTIONS';
/**
 * Both spellings of the key and client-version headers: the documented wire names
 * (Service-…) and the names the published clients send (Crossdeck-…).
 */
export const CORS_ALLOW_HEADERS =
  'Authorization, Crossdeck-Api-Key, Crossdeck-Sdk-Version, Service-Api-Key, Service-Sdk-Version, Idempotency-Key, Content-Type';
export const CORS_EXPOSE_HEADERS = 'X-Request-Id, Retry-After, X-Service-Sample-Rate, Idempotent-Replayed';
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Preflights are permissive (204, echo Origin); actual responses only expose headers here.
 * Access-Control-Allow-Origin on actual responses is granted by allowOrigin() once the
 * key's platform lock has accepted the origin, or by endpoints that need no key.
 * Returns true when it answered the request (a preflight).
 */
export function applyCors(req: HttpRequest, res: HttpResponse): boolean {
  setResponseHeader(res, 'Vary', 'Origin');
  if (req.method === 'OPTIONS') {
    const origin = req.headers.origin;
    if (origin) setResponseHeader(res, 'Access-Control-Allow-Origin', origin);
    setResponseHeader(res, 'Access-Control-Allow-Methods', CORS_ALLOW_METHODS);
    setResponseHeader(res, 'Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
    setResponseHeader(res, 'Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
    res.code(204).send();
    return true;
  }
  setResponseHeader(res, 'Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
  return false;
}

/** Lets a browser read this response: call once the origin has been accepted. */
export function allowOrigin(req: HttpRequest, res: HttpResponse): void {
  const origin = req.headers.origin;
  if (origin) setResponseHeader(res, 'Access-Control-Allow-Origin', origin);
}
