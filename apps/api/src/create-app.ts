import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  type AppConfig,
  type AppLogger,
  Metrics,
  NestPinoLogger,
  configureHttpEdge,
  loadSdkVersionsManifest,
  setupOpenApi,
  configureHttpServer,
  assertEveryRouteHasPolicy,
} from '../../../libs/platform/src/index.js';
import { AppModule } from './app.module.js';
import { DATABASE_SCHEMA } from './database-schema.js';

export interface CreateAppOptions {
  /** Extra modules (tests only: probe routes that exercise a platform primitive). */
  extraModules?: Type<unknown>[];
}

/** Builds the fully configured application (used by main.ts and by the e2e tests). */
export async function createApp(config: AppConfig, logger: AppLogger, options: CreateAppOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register({ config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }, options.extraModules),
    { bodyParser: false, logger: new NestPinoLogger(logger), abortOnError: false },
  );
  // First: counts and times every request, including those the edge middleware answers.
  app.use(app.get(Metrics).httpMiddleware());
  assertEveryRouteHasPolicy(app);
  configureHttpEdge(app, config, logger);
  configureHttpServer(app.getHttpServer(), config);
  setupOpenApi(app, { operatorApi: config.operatorToken !== undefined });
  await app.init();
  return app;
}
