import 'reflect-metadata';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  type AppConfig,
  ConfigError,
  DatabaseUnreachableError,
  type EmbeddedDatabase,
  assertDatabaseReachable,
  createAppLogger,
  loadConfig,
  startEmbeddedPostgres,
} from '../../../libs/platform/src/index.js';
import { DemoSeeder, formatDemoKeys } from '../../../libs/keys/src/index.js';
import { createApp } from './create-app.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config: AppConfig = loadConfig();
  const logger = createAppLogger(config.logLevel);
  let embedded: EmbeddedDatabase | undefined;
  const stopEmbedded = async () => {
    await embedded?.stop().catch(() => undefined);
    embedded = undefined;
  };

  // Registered before start-up so a SIGTERM while starting still stops the embedded database.
  let app: NestExpressApplication | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: no new connections, finishing in-flight requests');
    if (app) {
      const server = app.getHttpServer();
      const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      // Keep-alive sockets that finished their request would hold the close for their timeout.
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(force);
      clearInterval(idle);
      await app.close().catch((err: Error) => logger.error({ err: { message: err.message } }, 'error while closing'));
    }
    await stopEmbedded();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  try {
    if (!config.databaseUrl) {
      logger.info('DATABASE_URL is not set: starting the embedded PostgreSQL (EMBEDDED_PG_DIR, default .data/pg)');
      embedded = await startEmbeddedPostgres({ dataDir: process.env.EMBEDDED_PG_DIR || '.data/pg', database: 'entitlements', log: (m) => logger.debug({ component: 'embedded-postgres' }, m) });
      config = { ...config, databaseUrl: embedded.url };
    }
    await assertDatabaseReachable(config.databaseUrl!);
    app = await createApp(config, logger);
    if (config.nodeEnv !== 'production' && process.env.SEED_DEMO !== 'false') {
      const demo = await app.get(DemoSeeder).seedIfEmpty();
      if (demo) process.stdout.write(formatDemoKeys(demo));
    }
    await app.listen(config.port, config.host);
    logger.info({ port: config.port, host: config.host, docs: `/docs` }, 'API listening');
  } catch (err) {
    await stopEmbedded();
    throw err;
  }
}

main().catch((err: unknown) => {
  const expected = err instanceof ConfigError || err instanceof DatabaseUnreachableError;
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  process.stderr.write(`${expected ? 'startup failed' : 'startup failed (unexpected)'}: ${message}\n`);
  process.exit(1);
});
