import { type ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { RateLimiterService, type RateLimitDecision } from '../rate-limit/rate-limiter.service.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import type { HttpRequest } from '../http/http-types.js';
import type { RateLimitDeclaration } from './route-policy.js';
import { RoutePolicyHooks } from './route-policy.hooks.js';

const RATE_DECISION = Symbol('rateLimitDecision');

/** The decision of a route declared `@RateLimit(bucket, { partial: true })`: the handler lands what was granted. */
export const RateLimitDecisionParam = createParamDecorator((_data: unknown, ctx: ExecutionContext): RateLimitDecision => {
  const decision = (ctx.switchToHttp().getRequest() as Record<symbol, RateLimitDecision | undefined>)[RATE_DECISION];
  if (!decision) throw new Error('RateLimitDecisionParam used on a route without @RateLimit(bucket, { partial: true })');
  return decision;
});

/**
 * Charges a request to its route's bucket: the guard does for every route, the idempotency
 * interceptor instead for an idempotent one (inside the key's execution, so a replay costs no
 * tokens). Without a tenant (a route that takes no API key) nothing is charged.
 */
@Injectable()
export class RouteRateLimits {
  constructor(
    private readonly hooks: RoutePolicyHooks,
    private readonly limiter: RateLimiterService,
  ) {}

  async charge(rate: RateLimitDeclaration | undefined, req: HttpRequest, scope: TenantScope | undefined): Promise<void> {
    if (!rate || !scope) return;
    const rule = (await this.hooks.rulesOf(scope.projectId))[rate.bucket];
    if (!rule) throw new Error(`unknown rate-limit bucket ${rate.bucket}`);
    const cost = rate.cost ? rate.cost(req) : 1;
    if (rate.partial) {
      (req as unknown as Record<symbol, RateLimitDecision>)[RATE_DECISION] = await this.limiter.take(scope, rate.bucket, rule, cost, { partial: true });
      return;
    }
    const decision = await this.limiter.take(scope, rate.bucket, rule, cost);
    if (decision.granted < cost) throw ApiError.rateLimited(decision.retryAfterMs, decision.sampleRate);
  }
}
