import { Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '../errors/api-error.js';
import { DEFAULT_BODY_LIMIT_BYTES, assertDeclaredLength, readJsonBody } from '../http/body-parsing.js';
import { requestIdOf } from '../http/request-id.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { OperatorAuthenticator } from './operator-authenticator.js';
import { requestTenant, setRequestAuth } from './request-tenant.js';
import {
  type BodyLimitDeclaration,
  ROUTE_BODY_LIMIT,
  ROUTE_IDEMPOTENT,
  ROUTE_POLICY,
  ROUTE_RATE_LIMIT,
  type RateLimitDeclaration,
  type RoutePolicy,
} from './route-policy.js';
import { RoutePolicyHooks } from './route-policy.hooks.js';
import { RouteRateLimits } from './route-rate-limit.js';
import type { HttpRequest, HttpResponse } from '../http/http-types.js';

export interface RouteDeclarations {
  policy: RoutePolicy | undefined;
  body: BodyLimitDeclaration | undefined;
  /** The most of the body the route reads. */
  limit: number;
  rate: RateLimitDeclaration | undefined;
  /** Whether admission charges the bucket (an `@Idempotent()` route's interceptor charges it instead). */
  charge: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- a controller class or one of its handlers, as Nest keeps them
type RouteTarget = Function;

/**
 * What a request must pass before its handler runs, in the route policy's order: the declared
 * length, the caller its policy names, the body within the route's limit, then the route's
 * bucket. One rule for both ways a route is served: the global RoutePolicyGuard (Nest's
 * pipeline) and a fast path (fast-path.ts) call it alike.
 */
@Injectable()
export class RouteAdmission {
  constructor(
    private readonly reflector: Reflector,
    private readonly hooks: RoutePolicyHooks,
    private readonly rateLimits: RouteRateLimits,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly operator: OperatorAuthenticator,
  ) {}

  /** Each handler's declarations, read once (per controller class: a handler may be inherited by several). */
  private readonly declarations = new WeakMap<object, WeakMap<object, RouteDeclarations>>();

  async admit(declarations: RouteDeclarations, req: HttpRequest, res: HttpResponse, controller: RouteTarget, handler: RouteTarget): Promise<void> {
    const { policy, body, limit, rate, charge } = declarations;
    // A declared length over the limit is refused before anything else (authentication included): nothing is read.
    if (policy) assertDeclaredLength(req, limit);
    switch (policy?.kind) {
      case 'public':
        break;
      case 'operator':
        await this.operator.authenticate(req, res);
        break;
      case 'api_key': {
        const { scope, auth } = await this.hooks.authenticateApiKey(policy, req, res);
        setRequestAuth(req, scope, auth);
        break;
      }
      case 'store_webhook':
        await this.hooks.storeWebhookGate(policy.rail)(req);
        break;
      default:
        this.logger.error({ requestId: requestIdOf(req, res), handler: `${controller.name}.${handler.name}` }, 'route without a declared policy refused');
        throw ApiError.internal();
    }
    if (body?.admission) {
      // A route with an admission (large uploads): its bucket is charged before the body is
      // admitted and read, so a refused request costs neither memory nor a place.
      if (charge) await this.rateLimits.charge(rate!, req, requestTenant(req));
      const release = await this.hooks.bodyAdmission(body.admission)(req, requestTenant(req));
      res.raw.once('close', release);
      await readJsonBody(req, limit, { raw: true });
      return;
    }
    await readJsonBody(req, limit, { raw: policy.kind === 'store_webhook' || body?.raw === true, jsonBounds: body?.jsonBounds });
    if (charge) await this.rateLimits.charge(rate!, req, requestTenant(req));
  }

  /**
   * The route's policy, body limit and bucket as its decorators declare them (handler over
   * controller). Metadata does not change once the application runs, so the Reflector is
   * asked once per handler rather than five times per request.
   */
  declarationsOf(controller: RouteTarget, handler: RouteTarget): RouteDeclarations {
    let byHandler = this.declarations.get(controller);
    if (!byHandler) this.declarations.set(controller, (byHandler = new WeakMap()));
    let found = byHandler.get(handler);
    if (!found) {
      const targets = [handler, controller];
      const body = this.reflector.getAllAndOverride<BodyLimitDeclaration | undefined>(ROUTE_BODY_LIMIT, targets);
      const rate = this.reflector.getAllAndOverride<RateLimitDeclaration | undefined>(ROUTE_RATE_LIMIT, targets);
      found = {
        policy: this.reflector.getAllAndOverride<RoutePolicy | undefined>(ROUTE_POLICY, targets),
        body,
        limit: body?.bytes ?? DEFAULT_BODY_LIMIT_BYTES,
        rate,
        charge: rate !== undefined && !this.reflector.getAllAndOverride<boolean>(ROUTE_IDEMPOTENT, targets),
      };
      byHandler.set(handler, found);
    }
    return found;
  }
}
