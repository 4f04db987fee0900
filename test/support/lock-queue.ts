import type pg from 'pg';
import type { DataSource } from 'typeorm';

/** How many sessions of the database wait for a lock (asked outside the holder's transaction, which sees pg_stat_activity as of its first look). */
export async function waitingForLocks(db: DataSource): Promise<number> {
  const rows: { waiting: number }[] = await db.query(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return rows[0].waiting;
}

/** Resolves once at least `count` sessions wait for a lock (throws after 10 s). */
export async function untilWaiting(db: DataSource, count: number): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await waitingForLocks(db)) < count) {
    if (Date.now() > until) throw new Error(`${await waitingForLocks(db)} of ${count} sessions wait for a lock`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs `sends` while `holder` keeps what `lock` takes (rows, or an advisory lock), each started
 * once the ones before it wait, so they queue in this order; then lets go and answers their
 * results. The holder's transaction is rolled back if anything fails.
 */
export async function queuedBehind<T>(
  holder: pg.Client,
  db: DataSource,
  lock: { text: string; values: unknown[] },
  sends: (() => PromiseLike<T>)[],
): Promise<T[]> {
  await holder.query('BEGIN');
  try {
    await holder.query(lock.text, lock.values);
    const pending: Promise<T>[] = [];
    for (const send of sends) {
      // A supertest request starts when it is awaited: start it now.
      pending.push(Promise.resolve(send()));
      await untilWaiting(db, pending.length);
    }
    await holder.query('COMMIT');
    return await Promise.all(pending);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
  }
}
