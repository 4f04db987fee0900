import { type INestApplication, RequestMethod, SetMetadata } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { type FastRouteHandler, ServiceHttpAdapter } from '../http/http-edge.js';
import { type HttpRequest, setResponseHeader } from '../http/http-types.js';
import { RouteAdmission } from './route-admission.js';
import { ROUTE_IDEMPOTENT } from './route-policy.js';

export const ROUTE_FAST_PATH = 'platform:fast-path';

/** The handler's arguments, built from an admitted request (what its parameter decorators and pipes would give it). */
export type FastPathArguments = (req: HttpRequest) => unknown[];

/**
 * Serves a hot read without Nest's per-request pipeline (execution context, param factories,
 * the validation pipe): the handler stays the route (its policy, its OpenAPI operation, its
 * `@Header`s), the request passes the same RouteAdmission as the global guard's, and `args`
 * builds the handler's arguments. `args` must give exactly what the parameter decorators and
 * the validation pipe would, errors included (a test compares them); a route whose parameters
 * need class-validator's rules keeps Nest's pipeline.
 */
export const FastPath = (args: FastPathArguments) => SetMetadata(ROUTE_FAST_PATH, args);

interface Header {
  name: string;
  value: string | (() => string);
}

/** What a fast path would skip: a route that declares any of these keeps Nest's pipeline (refused at start-up). */
const PIPELINE_METADATA = [GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA, ROUTE_IDEMPOTENT];

const trimSlashes = (path: string): string => path.replace(/^\/+|\/+$/g, '');

/**
 * Gives the adapter, for every GET route whose controller method declares `@FastPath()`, a
 * handler that does what Nest's router does for it, in the same order: admission
 * (RouteAdmission, the guard's rule); the declared status and `@Header`s; the handler with
 * `args(req)`; the answer sent as Nest's Fastify adapter sends a plain object; any failure
 * through the exception filter. Call before `app.init()`, which registers the routes.
 */
export function installFastPaths(app: INestApplication): void {
  const adapter = app.getHttpAdapter();
  if (!(adapter instanceof ServiceHttpAdapter)) throw new Error('installFastPaths needs the ServiceHttpAdapter');
  const routes = fastPathRoutes(app);
  if (routes.length === 0) return;
  const admission = app.get(RouteAdmission);
  // The global filter itself (APP_FILTER is an alias of this provider).
  const filter = app.get(AllExceptionsFilter);
  for (const { controller, handler, instance, args, paths } of routes) {
    const routeHandler = fastHandler(admission, filter, controller, handler, instance, args);
    for (const path of paths) adapter.serveFast(path, routeHandler);
  }
}

interface FastPathRoute {
  controller: new (...args: unknown[]) => object;
  handler: (...args: unknown[]) => unknown;
  instance: object;
  args: FastPathArguments;
  paths: string[];
}

/** The handlers that declare `@FastPath()`, with their paths; throws for one a fast path cannot serve as Nest would. */
function fastPathRoutes(app: INestApplication): FastPathRoute[] {
  const routes: FastPathRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => object) | undefined;
      const instance = wrapper.instance as object | undefined;
      if (!controller || !instance) continue;
      const bases = [(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined) ?? ''].flat();
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const args = Reflect.getMetadata(ROUTE_FAST_PATH, handler) as FastPathArguments | undefined;
        if (!args) continue;
        if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.GET) throw new Error(`@FastPath() on ${controller.name}.${name}: GET routes only`);
        const skipped = PIPELINE_METADATA.filter(
          (key) => Reflect.getMetadata(key, handler) !== undefined || Reflect.getMetadata(key, controller) !== undefined,
        );
        if (skipped.length > 0)
          throw new Error(`@FastPath() on ${controller.name}.${name}: the route declares ${skipped.join(', ')}, which a fast path would skip`);
        const own = [(Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined) ?? ''].flat();
        const paths = bases.flatMap((base) => own.map((path) => `/${[trimSlashes(base), trimSlashes(path)].filter(Boolean).join('/')}`));
        routes.push({ controller, handler: handler as (...args: unknown[]) => unknown, instance, args, paths });
      }
    }
  }
  return routes;
}

function fastHandler(
  admission: RouteAdmission,
  filter: AllExceptionsFilter,
  controller: new (...args: unknown[]) => object,
  handler: (...args: unknown[]) => unknown,
  instance: object,
  args: FastPathArguments,
): FastRouteHandler {
  const declarations = admission.declarationsOf(controller, handler);
  const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? 200;
  const headers = (Reflect.getMetadata(HEADERS_METADATA, handler) as Header[] | undefined) ?? [];
  return async (req, res) => {
    try {
      await admission.admit(declarations, req, res, controller, handler);
      res.status(status);
      for (const header of headers) setResponseHeader(res, header.name, typeof header.value === 'function' ? header.value() : header.value);
      const result = await handler.apply(instance, args(req));
      return res.send(result);
    } catch (err) {
      filter.catch(err, new ExecutionContextHost([req, res, undefined]));
      return res;
    }
  };
}
