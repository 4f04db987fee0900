import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type AppConfig,
  type AppLogger,
  HttpEdge,
  Metrics,
  RoutePolicyHooks,
  NestPinoLogger,
  OperatorAuthenticator,
  ServiceHttpAdapter,
  loadSdkVersionsManifest,
  setupOpenApi,
  configureHttpServer,
  assertEveryRouteHasPolicy,
  installFastPaths,
} from '#platform';
import { AppModule } from './app.module.js';
import { DATABASE_SCHEMA } from './database-schema.js';

export interface CreateAppOptions {
  /** Extra modules (tests only: probe routes that exercise a platform primitive). */
  extraModules?: Type<unknown>[];
}

/** Builds the fully configured application (used by main.ts and by the e2e tests). */
export async function createApp(config: AppConfig, logger: AppLogger, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const edge = new HttpEdge();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }, options.extraModules),
    new ServiceHttpAdapter({ ...edge.serverOptions(config), skipMiddie: true }),
    { bodyParser: false, logger: new NestPinoLogger(logger), abortOnError: false },
  );
  assertEveryRouteHasPolicy(app);
  edge.attach(app.getHttpAdapter().getInstance(), app.get(Metrics), logger, config, app.get(RoutePolicyHooks), app.get(OperatorAuthenticator));
  installFastPaths(app);
  configureHttpServer(app.getHttpServer(), config);
  setupOpenApi(app, { enabled: config.docsEnabled, operatorApi: config.operatorToken !== undefined && config.docsOperator });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
