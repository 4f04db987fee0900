import './resolve-ts.cjs';
import { dropTestDatabase, type TestDatabaseHandle } from './test-database.js';

export default async function globalTeardown(): Promise<void> {
  const handle = (globalThis as Record<string, unknown>).__TEST_DATABASE__ as TestDatabaseHandle | undefined;
  if (!handle) return; // already dropped by the other project's teardown
  delete (globalThis as Record<string, unknown>).__TEST_DATABASE__;
  await dropTestDatabase(handle);
  process.env.DATABASE_URL = process.env.TEST_ORIGINAL_DATABASE_URL || undefined;
}
