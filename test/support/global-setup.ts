import './resolve-ts.cjs';
import { createRunDatabases, publishRunDatabases } from './test-database.js';

export default async function globalSetup(): Promise<void> {
  // The e2e and medium projects share this setup: one set of databases per run, created once.
  if ((globalThis as Record<string, unknown>).__TEST_DATABASE__) return;
  const handle = await createRunDatabases();
  (globalThis as Record<string, unknown>).__TEST_DATABASE__ = handle;
  process.env.TEST_ORIGINAL_DATABASE_URL = process.env.DATABASE_URL ?? '';
  // Workers are started after this and inherit the shared database and the template.
  publishRunDatabases(handle);
  process.env.DATABASE_URL = handle.url;
}
