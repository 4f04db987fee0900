import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type AppConfig,
  type AppLogger,
  Metrics,
  NestPinoLogger,
  answerClientError,
  answerFrameworkError,
  configureHttpEdge,
  loadSdkVersionsManifest,
  setupOpenApi,
  configureHttpServer,
  assertEveryRouteHasPolicy,
  parseQueryString,
  withV1Prefix,
} from '../../../libs/platform/src/index.js';
import { AppModule } from './app.module.js';
import { DATABASE_SCHEMA } from './database-schema.js';

export interface CreateAppOptions {
  /** Extra modules (tests only: probe routes that exercise a platform primitive). */
  extraModules?: Type<unknown>[];
}

/** Route parameters are bounded by the 16 KB header limit, not by the router (Fastify's default is 100 characters). */
const MAX_PARAM_LENGTH = 16 * 1024;

/** Builds the fully configured application (used by main.ts and by the e2e tests). */
export async function createApp(config: AppConfig, logger: AppLogger, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    rewriteUrl: withV1Prefix,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    // Requests on kept-alive connections during the shutdown's drain are served (main.ts), not refused.
    return503OnClosing: false,
    skipMiddie: true,
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQueryString },
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }, options.extraModules),
    adapter,
    { bodyParser: false, logger: new NestPinoLogger(logger), abortOnError: false },
  );
  assertEveryRouteHasPolicy(app);
  configureHttpEdge(app.getHttpAdapter().getInstance(), app.get(Metrics), logger);
  configureHttpServer(app.getHttpServer(), config);
  setupOpenApi(app, { operatorApi: config.operatorToken !== undefined });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
