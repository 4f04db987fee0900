import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { DataSource as DataSourceToken } from 'typeorm';
import { type AppConfig, Clock, createAppLogger, loadConfig } from '#platform';
import { createApp } from '../../apps/api/src/create-app.js';
import { createTestDatabase, dropTestDatabase, type TestDatabaseHandle } from './test-database.js';

export const TEST_OPERATOR_TOKEN = 'op_test_token_0123456789abcdef';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  /** supertest agent bound to the app's HTTP server. */
  http: ReturnType<typeof request>;
  dataSource: DataSource;
  clock: Clock;
  close(): Promise<void>;
}

/** The real application on the test database; env overrides the defaults below. */
export interface TestAppOptions {
  /** Receives every JSON log line (set LOG_LEVEL in env to see more than nothing). */
  onLogLine?: (line: Record<string, unknown>) => void;
  /** Test-only modules (probe routes for platform primitives). */
  extraModules?: Type<unknown>[];
  /**
   * The app runs on a database of its own (a copy of the migrated template), dropped when it
   * closes. For suites that run background work over whole tables (sweeps, resolvers, the
   * dispatcher, purges) or whose assertions follow their clock: on the shared database that
   * work would claim other suites' rows, and theirs its rows. A second app of the suite (a
   * replica) joins it with `{ DATABASE_URL: first.config.databaseUrl }` and closes first.
   */
  ownDatabase?: boolean;
}

export async function createTestApp(env: Record<string, string | undefined> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  if (!options.ownDatabase) return startTestApp(env, options);
  const database = await createTestDatabase();
  let t: TestApp;
  try {
    t = await startTestApp({ ...env, DATABASE_URL: database.url }, options);
  } catch (err) {
    await dropTestDatabase(database);
    throw err;
  }
  return { ...t, close: () => closeThenDrop(t, database) };
}

async function closeThenDrop(t: TestApp, database: TestDatabaseHandle): Promise<void> {
  try {
    await t.close();
  } finally {
    await dropTestDatabase(database);
  }
}

async function startTestApp(env: Record<string, string | undefined>, options: TestAppOptions): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    // Suites assert limits; on a loaded CI machine a Redis answer slower than the production
    // 100 ms must not fail open. The timeout itself is unit-tested (rate-limiter.spec.ts).
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    // The suites read the whole document, the operator API's part included.
    DOCS_OPERATOR: 'true',
    TEST_CLOCK: 'enabled',
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const destination = options.onLogLine
    ? {
        write: (chunk: string) =>
          chunk
            .split('\n')
            .filter(Boolean)
            .forEach((line) => options.onLogLine!(JSON.parse(line))),
      }
    : undefined;
  const app = await createApp(config, createAppLogger(config.logLevel, destination), { extraModules: options.extraModules });
  const server = app.getHttpServer();
  return {
    app,
    config,
    http: request(server),
    dataSource: app.get<DataSource>(DataSourceToken),
    clock: app.get(Clock),
    close: () => app.close(),
  };
}

export function operatorAuth(): Record<string, string> {
  return { Authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };
}
