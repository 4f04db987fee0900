import './resolve-ts.cjs';
import { createTestDatabase } from './test-database.js';

export default async function globalSetup(): Promise<void> {
  // The e2e and medium projects share this setup: one database per run, created once.
  if ((globalThis as Record<string, unknown>).__TEST_DATABASE__) return;
  const handle = await createTestDatabase();
  (globalThis as Record<string, unknown>).__TEST_DATABASE__ = handle;
  process.env.TEST_ORIGINAL_DATABASE_URL = process.env.DATABASE_URL ?? '';
  process.env.TEST_ADMIN_DATABASE_URL = handle.adminUrl;
  // Workers are started after this and inherit the test database.
  process.env.DATABASE_URL = handle.url;
}
