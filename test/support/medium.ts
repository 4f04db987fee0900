import 'reflect-metadata';
import type { INestApplicationContext, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { type AppConfig, Clock, NestPinoLogger, Sql, type TenantScope, createAppLogger, loadConfig, loadSdkVersionsManifest } from '#platform';
import { AppModule } from '../../apps/api/src/app.module.js';
import { DATABASE_SCHEMA } from '../../apps/api/src/database-schema.js';
import { TEST_OPERATOR_TOKEN } from './test-app.js';

/**
 * The medium layer (immich's): the application's providers wired by Nest on the test
 * database, with no HTTP server, no routes and no edge. A medium test takes a service with
 * its real repositories and drives the rules e2e tests reach only slowly.
 */
export interface MediumContext {
  ctx: INestApplicationContext;
  config: AppConfig;
  dataSource: DataSource;
  sql: Sql;
  clock: Clock;
  get<T>(type: Type<T>): T;
  /** Factory: a new project (its row only); answers its id. */
  newProject(): Promise<string>;
  /** Factory: a new active customer in the scope; answers its id. */
  newCustomer(scope: TenantScope): Promise<string>;
  close(): Promise<void>;
}

export async function createMediumContext(env: Record<string, string | undefined> = {}): Promise<MediumContext> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    TEST_CLOCK: 'enabled',
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
  const logger = createAppLogger(config.logLevel);
  const ctx = await NestFactory.createApplicationContext(
    AppModule.register({ config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }),
    {
      logger: new NestPinoLogger(logger),
      abortOnError: false,
    },
  );
  await ctx.init();
  return {
    ctx,
    config,
    dataSource: ctx.get(DataSource),
    sql: ctx.get(Sql),
    clock: ctx.get(Clock),
    get: (type) => ctx.get(type),
    newProject: () => newProject(ctx.get(DataSource)),
    newCustomer: (scope) => newCustomer(ctx.get(DataSource), scope),
    close: () => ctx.close(),
  };
}

let sequence = 0;
/** A unique suffix for ids created by one test run. */
export const unique = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(++sequence).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** A project row and customers in it, written directly (the medium tests need no API key). */
export async function seedProject(
  dataSource: DataSource,
  customers: Array<'sandbox' | 'production'> = [],
): Promise<{ projectId: string; customerIds: string[] }> {
  const projectId = unique('proj_medium');
  await dataSource.query(`INSERT INTO projects (id, name, created_at) VALUES ($1, 'Medium test', now())`, [projectId]);
  const customerIds: string[] = [];
  for (const env of customers) {
    const id = unique('cdcust_medium');
    await dataSource.query(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [id, projectId, env]);
    customerIds.push(id);
  }
  return { projectId, customerIds };
}

/** A project row, written directly (the medium tests need no API key). */
export async function newProject(dataSource: DataSource): Promise<string> {
  const projectId = unique('proj_medium');
  await dataSource.query(`INSERT INTO projects (id, name, created_at) VALUES ($1, 'Medium test', now())`, [projectId]);
  return projectId;
}

/** An active customer of the scope, written directly. */
export async function newCustomer(dataSource: DataSource, scope: TenantScope): Promise<string> {
  const id = unique('cdcust_medium');
  await dataSource.query(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [
    id,
    scope.projectId,
    scope.env,
  ]);
  return id;
}
