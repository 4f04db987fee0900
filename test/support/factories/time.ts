import type { MediumContext } from '../medium.js';

/**
 * Time no test clock moves: leases and stamps follow the database's clock (infrastructure time),
 * so the situations "a worker holds it until then" and "its lease ran out" are written directly.
 */

type Db = Pick<MediumContext['dataSource'], 'query'>;

/** Factory: a worker `worker` claimed the job (its first attempt) and holds its lease for `forMs` more on the database's clock. */
export async function jobLeasedBy(db: Db, jobId: string, worker: string, forMs: number): Promise<void> {
  await db.query(
    `UPDATE jobs SET status = 'running', attempts = 1, leased_by = $2, leased_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3::bigint WHERE id = $1`,
    [jobId, worker, forMs],
  );
}

/** Factory: the job's lease ran out a moment ago on the database's clock (its worker died holding it). */
export async function expireJobLease(db: Db, jobId: string): Promise<void> {
  await db.query(`UPDATE jobs SET leased_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1 WHERE id = $1`, [jobId]);
}
