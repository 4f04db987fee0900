import pg from 'pg';

/**
 * Whether PostgreSQL answers, on a dedicated one-connection pool: a busy request pool neither
 * delays the probe nor loses a connection to it (the readiness check, runtime.md).
 */
export class DatabaseProbe {
  private pool: pg.Pool | undefined;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** True when `SELECT 1` answers within the timeout (connecting included). */
  async answers(): Promise<boolean> {
    this.pool ??= this.createPool();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.pool.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end().catch(() => undefined);
  }

  private createPool(): pg.Pool {
    const pool = new pg.Pool({
      connectionString: this.url,
      max: 1,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
      application_name: 'entitlements-readyz',
    });
    pool.on('error', () => undefined); // an idle connection dropped by the server: the next probe reconnects
    return pool;
  }
}
