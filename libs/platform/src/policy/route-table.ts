import type { INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { type ErrorCodes, ROUTE_ERROR_CODES } from '../openapi/error-codes.js';
import { ROUTE_BODY_LIMIT, ROUTE_IDEMPOTENT, ROUTE_POLICIES, ROUTE_RATE_LIMIT, type RateLimitDeclaration, type RoutePolicy } from './route-policy.js';

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'ALL', 'OPTIONS', 'HEAD'];

export interface RouteEntry {
  handler: string;
  method: string;
  paths: string[];
  /** Undefined, or several, when the handler breaks the one-policy rule. */
  policies: RoutePolicy[];
  rateLimit?: string;
  idempotent: boolean;
  bodyLimit?: number;
  /** Error codes declared with @ApiErrors() (those its policy implies are not listed). */
  errorCodes: ErrorCodes;
}

export class RoutePolicyError extends Error {}

const list = (value: unknown): string[] => (Array.isArray(value) ? value : [value ?? '']).map((p) => String(p).replace(/^\/+|\/+$/g, ''));

/** Every route handler of the application with what it declares. */
export function routeTable(app: INestApplication): RouteEntry[] {
  const entries: RouteEntry[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | undefined;
      if (!controller) continue;
      const bases = list(Reflect.getMetadata(PATH_METADATA, controller));
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const policies = [...(Reflect.getMetadata(ROUTE_POLICIES, handler) ?? []), ...(Reflect.getMetadata(ROUTE_POLICIES, controller) ?? [])] as RoutePolicy[];
        const rate = (Reflect.getMetadata(ROUTE_RATE_LIMIT, handler) ?? Reflect.getMetadata(ROUTE_RATE_LIMIT, controller)) as RateLimitDeclaration | undefined;
        const paths = bases.flatMap((base) => list(Reflect.getMetadata(PATH_METADATA, handler)).map((path) => `/${[base, path].filter(Boolean).join('/')}`));
        entries.push({
          handler: `${controller.name}.${name}`,
          method: METHODS[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? 'ANY',
          paths,
          policies,
          rateLimit: rate?.bucket,
          idempotent: Boolean(Reflect.getMetadata(ROUTE_IDEMPOTENT, handler)),
          bodyLimit: (Reflect.getMetadata(ROUTE_BODY_LIMIT, handler) as { bytes: number } | undefined)?.bytes,
          errorCodes: (Reflect.getMetadata(ROUTE_ERROR_CODES, handler) as ErrorCodes | undefined) ?? {},
        });
      }
    }
  }
  return entries.sort((a, b) => (a.paths[0] === b.paths[0] ? a.method.localeCompare(b.method) : a.paths[0] < b.paths[0] ? -1 : 1));
}

/** Refuses to start an application with a route that declares no policy, or more than one. */
export function assertEveryRouteHasPolicy(app: INestApplication): void {
  for (const route of routeTable(app)) {
    if (route.policies.length !== 1) {
      throw new RoutePolicyError(
        `route ${route.method} ${route.paths.join(', ')} (${route.handler}) must declare exactly one of @Public(), @RequireApiKey(), @Operator(), @StoreWebhook(); it declares ${route.policies.length}`,
      );
    }
  }
}
