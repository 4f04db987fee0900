import pg from 'pg';
import { describeDatabaseUrl } from './data-source-options.js';

export class DatabaseUnreachableError extends Error {}

/** The oldest PostgreSQL the schema supports (UNIQUE NULLS NOT DISTINCT needs 15). */
export const MINIMUM_POSTGRES_VERSION_NUM = 150000;

/** Fails fast with a one-line reason instead of a retry loop and a stack trace. */
export async function assertDatabaseReachable(url: string, timeoutMs = 5000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  let version: number;
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    version = Number(rows[0]?.v);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const reason = e.code ? `${e.code}${e.message ? ` (${e.message.split('\n')[0]})` : ''}` : (e.message ?? String(err)).split('\n')[0];
    throw new DatabaseUnreachableError(`Cannot connect to the database at ${describeDatabaseUrl(url)}: ${reason}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (version < MINIMUM_POSTGRES_VERSION_NUM) {
    throw new DatabaseUnreachableError(
      `PostgreSQL 15 or newer is required; the server at ${describeDatabaseUrl(url)} is ${Math.floor(version / 10000)}.${version % 10000}`,
    );
  }
}
