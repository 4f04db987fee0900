import './resolve-ts.cjs';
import { dropRunDatabases, type RunDatabasesHandle } from './test-database.js';

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__TEST_DATABASE__ as RunDatabasesHandle | undefined;
  if (!handle) return; // already dropped by the other project's teardown
  delete (globalThis as Record<string, unknown>).__TEST_DATABASE__;
  await dropRunDatabases(handle);
  process.env.DATABASE_URL = process.env.TEST_ORIGINAL_DATABASE_URL || undefined;
}
