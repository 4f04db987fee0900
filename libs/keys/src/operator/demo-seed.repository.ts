import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ADVISORY_LOCKS } from '#platform';

/** The demo seed's guard: one replica at a time looks at an empty database. */
@Injectable()
export class DemoSeedRepository {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  /**
   * Runs `work` while holding the seed's session advisory lock (replicas starting together
   * wait their turn), telling it whether any project exists. The lock is held on its own
   * connection; `work` writes through the usual repositories.
   */
  async withSeedLock<T>(work: (anyProjectExists: boolean) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.demoSeed]);
      const [{ exists }] = await runner.query('SELECT EXISTS (SELECT 1 FROM projects) AS exists');
      return await work(exists === true);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCKS.demoSeed]).catch(() => undefined);
      await runner.release();
    }
  }
}
