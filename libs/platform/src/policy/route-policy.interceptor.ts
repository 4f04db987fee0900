import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, createParamDecorator } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { type Observable, lastValueFrom, of } from 'rxjs';
import { ApiError } from '../errors/api-error.js';
import { IdempotencyService, bodyHash, parseIdempotencyKey } from '../idempotency/idempotency.service.js';
import { RateLimiterService, type RateLimitDecision } from '../rate-limit/rate-limiter.service.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import { requestTenant } from './request-tenant.js';
import { ROUTE_IDEMPOTENT, ROUTE_RATE_LIMIT, type RateLimitDeclaration } from './route-policy.js';
import { RoutePolicyHooks } from './route-policy.hooks.js';
import { type HttpRequest, type HttpResponse, setResponseHeader } from '../http/http-types.js';

const RATE_DECISION = Symbol('rateLimitDecision');

/** The decision of a route declared `@RateLimit(bucket, { partial: true })`: the handler lands what was granted. */
export const RateLimitDecisionParam = createParamDecorator((_data: unknown, ctx: ExecutionContext): RateLimitDecision => {
  const decision = (ctx.switchToHttp().getRequest() as Record<symbol, RateLimitDecision | undefined>)[RATE_DECISION];
  if (!decision) throw new Error('RateLimitDecisionParam used on a route without @RateLimit(bucket, { partial: true })');
  return decision;
});

/**
 * The cross-cutting behaviour a route declares, after the guard authenticated it: a replay
 * of an idempotent request is answered first (and costs no tokens), then the route's bucket is
 * charged, then the handler runs (for an idempotent request, inside the transaction that
 * stores its answer).
 */
@Injectable()
export class RoutePolicyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly hooks: RoutePolicyHooks,
    private readonly limiter: RateLimiterService,
    private readonly idempotency: IdempotencyService,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const targets = [context.getHandler(), context.getClass()];
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const res = context.switchToHttp().getResponse<HttpResponse>();
    const rate = this.reflector.getAllAndOverride<RateLimitDeclaration | undefined>(ROUTE_RATE_LIMIT, targets);
    const scope = requestTenant(req);
    const key = this.reflector.getAllAndOverride<boolean>(ROUTE_IDEMPOTENT, targets) ? parseIdempotencyKey(req.headers['idempotency-key']) : undefined;

    if (key !== undefined && scope) {
      const statusCode = this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? (req.method === 'POST' ? 201 : 200);
      const answer = await this.idempotency.execute(scope, endpointOf(context), key, bodyHash(req.body), statusCode, async () => {
        await this.charge(rate, req, scope);
        return lastValueFrom(next.handle(), { defaultValue: undefined });
      });
      if (answer.replayed) setResponseHeader(res, 'Idempotent-Replayed', 'true');
      return of(answer.body);
    }
    await this.charge(rate, req, scope);
    return next.handle();
  }

  private async charge(rate: RateLimitDeclaration | undefined, req: HttpRequest, scope: TenantScope | undefined): Promise<void> {
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

/** `POST /v1/purchases/sync`: the handler's canonical (first) path, so legacy aliases share one key space. */
export function endpointOf(context: ExecutionContext): string {
  const first = (value: unknown): string => String((Array.isArray(value) ? value[0] : value) ?? '').replace(/^\/+|\/+$/g, '');
  const base = first(Reflect.getMetadata(PATH_METADATA, context.getClass()));
  const path = first(Reflect.getMetadata(PATH_METADATA, context.getHandler()));
  const method =
    ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'ALL', 'OPTIONS', 'HEAD'][Reflect.getMetadata(METHOD_METADATA, context.getHandler()) as number] ?? 'ANY';
  return `${method} /${[base, path].filter(Boolean).join('/')}`;
}
