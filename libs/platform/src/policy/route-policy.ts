import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import { CONSOLE_SESSION, OPERATOR_BEARER } from '../openapi/security-schemes.js';
import type { JsonBounds } from '../http/json-bounds.js';
import type { HttpRequest } from '../http/http-types.js';

/** Metadata keys read by RouteAdmission (the global guard's rule), the IdempotencyInterceptor and the route table. */
export const ROUTE_POLICY = 'platform:route-policy';
export const ROUTE_RATE_LIMIT = 'platform:rate-limit';
export const ROUTE_IDEMPOTENT = 'platform:idempotent';
export const ROUTE_BODY_LIMIT = 'platform:body-limit';
/** Every policy declared on a handler or controller, so that two on one target are caught at start-up. */
export const ROUTE_POLICIES = 'platform:route-policies';

export type KeyKind = 'publishable' | 'secret';

/** Which API keys a route accepts (the key guard's whole verification order runs for it). */
export interface ApiKeyPolicy {
  kind: 'api_key';
  /** Key kinds the endpoint accepts; any other kind is 401 invalid_api_key. */
  kinds: readonly KeyKind[];
  /** Scopes a secret key must hold (403 insufficient_scope before any data is read). */
  scopes?: readonly string[];
  /** Reads that also take workspace keys (`cd_wk_…`) and the `project` parameter (the keys context's KeyRequirement). */
  workspace?: 'project' | 'workspace';
  /** Heartbeat only: a web app with an empty allowlist learns the calling Origin. */
  learnOrigin?: boolean;
}

export type RoutePolicy =
  | { kind: 'public' }
  | ApiKeyPolicy
  | { kind: 'operator' }
  /** A store's notification: no API key; the rail authenticates its own way (signature, JWS, push token). */
  | { kind: 'store_webhook'; rail: string };

/** Declares a route policy on a handler or a controller (and records it, to catch a second one). */
export function DeclarePolicy(policy: RoutePolicy): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const subject = (descriptor?.value ?? target) as object;
    Reflect.defineMetadata(ROUTE_POLICIES, [...((Reflect.getMetadata(ROUTE_POLICIES, subject) as RoutePolicy[] | undefined) ?? []), policy], subject);
    Reflect.defineMetadata(ROUTE_POLICY, policy, subject);
  };
}

/**
 * Every handler declares exactly one policy; the app refuses to start when one has none
 * (assertEveryRouteHasPolicy), and the global guard refuses a request whose route has none.
 */
export const Public = () => DeclarePolicy({ kind: 'public' });

/**
 * The operator (dashboard) API: `Authorization: Bearer <OPERATOR_TOKEN>`, or the console's
 * session cookie (changes with its X-CSRF-Token); 404 when the operator API is off.
 */
export const Operator = () => applyDecorators(DeclarePolicy({ kind: 'operator' }), ApiBearerAuth(OPERATOR_BEARER), ApiSecurity(CONSOLE_SESSION));

/** A store notification endpoint of `rail`; the rail's gate answers 404 for an unknown project or a rail not enabled. */
export const StoreWebhook = (rail: string) => DeclarePolicy({ kind: 'store_webhook', rail });

export interface RateLimitOptions {
  /** Tokens this request costs (default 1); e.g. the number of events in a batch. Read from the parsed body. */
  cost?: (req: HttpRequest) => number;
  /**
   * Take what is available instead of all-or-nothing, and leave the decision to the handler
   * (`@RateLimitDecision()`): an events batch lands what fits.
   */
  partial?: boolean;
}

export interface RateLimitDeclaration extends RateLimitOptions {
  bucket: string;
}

/** Charges the project's `bucket` after authentication; all-or-nothing answers 429 rate_limited. */
export const RateLimit = (bucket: string, options: RateLimitOptions = {}) =>
  SetMetadata(ROUTE_RATE_LIMIT, { bucket, ...options } satisfies RateLimitDeclaration);

export interface BodyLimitDeclaration {
  bytes: number;
  /** Depth and key-count bounds of the parsed body (default DEFAULT_JSON_BOUNDS); null leaves them to the route. */
  jsonBounds?: JsonBounds | null;
  /** The body reaches the handler as bytes, unparsed (rawBodyOf): the route parses it itself (off the event loop). */
  raw?: boolean;
  /**
   * The name of a body admission registered by a context (RoutePolicyHooks): called after
   * authentication and before any byte is read, it waits for room or throws; what it returns
   * is called once the response is done.
   */
  admission?: string;
}

/** The most a route reads of a request body (after decompression); the default is DEFAULT_BODY_LIMIT_BYTES. */
export const BodyLimit = (bytes: number, options: { jsonBounds?: JsonBounds | null; raw?: boolean; admission?: string } = {}) =>
  SetMetadata(ROUTE_BODY_LIMIT, { bytes, ...options } satisfies BodyLimitDeclaration);
