import pg from 'pg';
import { describeDatabaseUrl } from './data-source-options.js';

export class DatabaseUnreachableError extends Error {}

/** Fails fast with a one-line reason instead of a retry loop and a stack trace. */
export async function assertDatabaseReachable(url: string, timeoutMs = 5000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const reason = e.code ? `${e.code}${e.message ? ` (${e.message.split('\n')[0]})` : ''}` : (e.message ?? String(err)).split('\n')[0];
    throw new DatabaseUnreachableError(`Cannot connect to the database at ${describeDatabaseUrl(url)}: ${reason}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
