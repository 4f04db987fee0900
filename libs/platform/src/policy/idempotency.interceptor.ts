import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, SetMetadata, UseInterceptors, applyDecorators } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { type Observable, lastValueFrom, of } from 'rxjs';
import { IdempotencyService, bodyHash, parseIdempotencyKey } from '../idempotency/idempotency.service.js';
import { requestTenant } from './request-tenant.js';
import { ROUTE_IDEMPOTENT, ROUTE_RATE_LIMIT, type RateLimitDeclaration } from './route-policy.js';
import { RouteRateLimits } from './route-rate-limit.js';
import { type HttpRequest, type HttpResponse, setResponseHeader } from '../http/http-types.js';

/**
 * The interceptor of an `@Idempotent()` route, after the guard authenticated it: a replay of
 * an idempotent request is answered first (and costs no tokens), then the route's bucket is
 * charged, then the handler runs inside the transaction that stores its answer. Bound to those
 * routes only: a route without an interceptor skips Nest's interceptor chain (its RxJS
 * pipeline and async resources), a measurable share of a read's CPU
 * (docs/performance.md, "What the measurements showed"); every other route is charged by the guard.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly rateLimits: RouteRateLimits,
    private readonly idempotency: IdempotencyService,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const res = context.switchToHttp().getResponse<HttpResponse>();
    const rate = this.reflector.getAllAndOverride<RateLimitDeclaration | undefined>(ROUTE_RATE_LIMIT, [context.getHandler(), context.getClass()]);
    const scope = requestTenant(req);
    const key = parseIdempotencyKey(req.headers['idempotency-key']);

    if (key !== undefined && scope) {
      const statusCode = this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? (req.method === 'POST' ? 201 : 200);
      const answer = await this.idempotency.execute(scope, endpointOf(context), key, bodyHash(req.body), statusCode, async () => {
        await this.rateLimits.charge(rate, req, scope);
        return lastValueFrom(next.handle(), { defaultValue: undefined });
      });
      if (answer.replayed) setResponseHeader(res, 'Idempotent-Replayed', 'true');
      return of(answer.body);
    }
    await this.rateLimits.charge(rate, req, scope);
    return next.handle();
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

/**
 * Stripe-style idempotency on `Idempotency-Key` (see IdempotencyService): the first 2xx answer
 * is stored for 24 h with the handler's writes, replayed for the same key and body. On a
 * handler: binds the IdempotencyInterceptor to it.
 */
export const Idempotent = () =>
  applyDecorators(
    SetMetadata(ROUTE_IDEMPOTENT, true),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        '1–255 printable characters. The same key and body within 24 h replays the first answer (`Idempotent-Replayed: true`, ' +
        '`idempotent_replay: true`); the same key with another body is `400 idempotency_key_in_use`.',
    }),
  );
