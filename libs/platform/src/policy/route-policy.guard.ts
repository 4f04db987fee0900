import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { RouteAdmission } from './route-admission.js';
import type { HttpRequest, HttpResponse } from '../http/http-types.js';

/**
 * The one global guard (APP_GUARD). It fails closed: a handler without a declared policy is
 * refused (and the app does not even start with one: assertEveryRouteHasPolicy). It
 * authenticates the caller the route's policy names, and only then reads the body, within
 * the route's limit: nothing is read or inflated for a caller the route would refuse. Then it
 * charges the route's bucket, except on an `@Idempotent()` route, whose interceptor charges
 * only a request that is not a replay. The rule itself is RouteAdmission's (a fast path runs
 * the same).
 */
@Injectable()
export class RoutePolicyGuard implements CanActivate {
  constructor(private readonly admission: RouteAdmission) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const controller = context.getClass();
    const handler = context.getHandler();
    const http = context.switchToHttp();
    await this.admission.admit(
      this.admission.declarationsOf(controller, handler),
      http.getRequest<HttpRequest>(),
      http.getResponse<HttpResponse>(),
      controller,
      handler,
    );
    return true;
  }
}

export function describeHandler(context: ExecutionContext): string {
  return `${context.getClass().name}.${context.getHandler().name}`;
}
