import 'reflect-metadata';
import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { type AppConfig, Clock, NestPinoLogger, PlatformModule, Sql, type TenantScope, createAppLogger, loadConfig, loadSdkVersionsManifest } from '#platform';
import type { AuthContext } from '#keys';
import { type CatalogProduct, ProductCatalog } from '#entitlements';
import { AppModule } from '../../apps/api/src/app.module.js';
import { DATABASE_SCHEMA } from '../../apps/api/src/database-schema.js';
import { TEST_OPERATOR_TOKEN } from './test-app.js';
import { testScope } from './scopes.js';

/**
 * The medium layer (immich's): services wired by Nest on the test database, with no HTTP
 * server, no routes and no edge. A test boots the whole application, or only the platform and
 * the context modules it names (with what they import), takes a service with its real
 * repositories and drives the rules e2e tests reach only slowly.
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
  /** Factory: the project's product catalogue, replaced by these rows (needs the entitlements module). */
  newCatalogue(scope: TenantScope, products: readonly CatalogProduct[]): Promise<void>;
  /** Factory: the caller a key of the scope would yield (publishable unless told). */
  newAuth(scope: TenantScope, over?: Partial<AuthContext>): AuthContext;
  close(): Promise<void>;
}

export interface MediumOptions {
  /** Context modules to boot beside the platform (with what they import); the whole application when absent. */
  modules?: Type<unknown>[];
  /** Configuration overrides (as environment variables). */
  env?: Record<string, string | undefined>;
}

@Module({})
class MediumModule {
  static register(platform: Parameters<typeof PlatformModule.forRoot>[0], modules: Type<unknown>[]): DynamicModule {
    return { module: MediumModule, imports: [PlatformModule.forRoot(platform), ...modules] };
  }
}

export async function createMediumContext(options: MediumOptions = {}): Promise<MediumContext> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    TEST_CLOCK: 'enabled',
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const logger = createAppLogger(config.logLevel);
  const platform = { config, logger, sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA };
  const root = options.modules ? MediumModule.register(platform, options.modules) : AppModule.register(platform);
  const ctx = await NestFactory.createApplicationContext(root, { logger: new NestPinoLogger(logger), abortOnError: false });
  await ctx.init();
  const dataSource = ctx.get(DataSource);
  return {
    ctx,
    config,
    dataSource,
    sql: ctx.get(Sql),
    clock: ctx.get(Clock),
    get: (type) => ctx.get(type),
    newProject: () => newProject(dataSource),
    newCustomer: (scope) => newCustomer(dataSource, scope),
    newCatalogue: async (scope, products) => {
      await ctx.get(ProductCatalog).replace(scope.projectId, products);
    },
    newAuth: (scope, over = {}) => ({
      ...scope,
      keyId: unique('key_medium'),
      kind: 'publishable',
      appId: unique('app_medium'),
      scopes: [],
      platform: 'web',
      requestId: unique('req_medium'),
      ...over,
    }),
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
  const projectId = await newProject(dataSource);
  const customerIds: string[] = [];
  for (const env of customers) customerIds.push(await newCustomer(dataSource, testScope(projectId, env)));
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
