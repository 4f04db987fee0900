import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  type AppConfig,
  type AppLogger,
  NestPinoLogger,
  configureHttpEdge,
  loadSdkVersionsManifest,
  setupOpenApi,
} from '../../../libs/platform/src/index.js';
import { AppModule } from './app.module.js';
import { DATABASE_SCHEMA } from './database-schema.js';

/** Builds the fully configured application (used by main.ts and by the e2e tests). */
export async function createApp(config: AppConfig, logger: AppLogger): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.register({ config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }),
    { bodyParser: false, logger: new NestPinoLogger(logger), abortOnError: false },
  );
  configureHttpEdge(app, config, logger);
  setupOpenApi(app);
  await app.init();
  return app;
}
