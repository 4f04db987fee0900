// The TypeORM data source used by the migration CLI (`npm run migration:run`).
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './libs/platform/src/index.js';
import { DATABASE_SCHEMA } from './apps/api/src/database-schema.js';

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('migration:run needs DATABASE_URL (postgres://user:pass@host:port/db)\n');
  process.exit(1);
}

export default new DataSource(dataSourceOptions(url, DATABASE_SCHEMA, 2));
