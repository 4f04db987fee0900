import { existsSync, rmSync } from 'node:fs';
import { embeddedDataDirCandidates, stopStaleServer } from './embedded-postgres.js';

/** The development reset refused: production, or a database the embedded server does not own. */
export class EmbeddedResetRefusedError extends Error {}

export interface EmbeddedResetOptions {
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
}

/**
 * `npm run reset:dev`: removes the embedded PostgreSQL data of `npm start` (EMBEDDED_PG_DIR,
 * default `.data/pg`) wherever it lives, the checkout or its staged twin under the temp dir,
 * after stopping a server still running on it. The next start initialises an empty database
 * and prints new demo keys. Refused in production and with DATABASE_URL set: that database is
 * not the embedded one and is never touched from here.
 * Returns the directories removed.
 */
export async function resetEmbeddedData({ env, log }: EmbeddedResetOptions): Promise<string[]> {
  if (env.NODE_ENV === 'production') {
    throw new EmbeddedResetRefusedError('NODE_ENV=production: reset:dev only removes the embedded development database');
  }
  if (env.DATABASE_URL) {
    throw new EmbeddedResetRefusedError(
      'DATABASE_URL is set: reset:dev only removes the embedded PostgreSQL data; empty that database yourself, or unset DATABASE_URL',
    );
  }
  const requested = env.EMBEDDED_PG_DIR || '.data/pg';
  const removed: string[] = [];
  for (const dir of embeddedDataDirCandidates(requested)) {
    if (!existsSync(dir)) continue;
    await stopStaleServer(dir, log);
    rmSync(dir, { recursive: true, force: true });
    log(`removed the embedded PostgreSQL data in ${dir}`);
    removed.push(dir);
  }
  if (removed.length === 0) log(`no embedded PostgreSQL data for ${requested}: nothing to remove`);
  return removed;
}
