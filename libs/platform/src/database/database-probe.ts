import pg from 'pg';

/**
 * Whether PostgreSQL answers, on a dedicated one-connection pool: a busy request pool neither
 * delays the probe nor loses a connection to it (the readiness check: PostgreSQL answers within 1 s).
 */
export class DatabaseProbe {
  private pool: pg.Pool | undefined;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  /** True when `SELECT 1` answers within the timeout (connecting included). */
  async answers(): Promise<boolean> {
    return (await this.query('SELECT 1')).answered;
  }

  /**
   * The names in TypeORM's migrations table, within the timeout: `answered` false when the
   * server did not answer, `names` empty when the table does not exist yet (nothing applied).
   */
  async appliedMigrations(table: string): Promise<{ answered: boolean; names: Set<string> }> {
    const result = await this.query(`SELECT name FROM "${table.replace(/"/g, '')}"`);
    if (result.answered) return { answered: true, names: new Set(result.rows.map((row) => String(row.name))) };
    // undefined_table: the server answered, no migration has run yet.
    return { answered: result.code === '42P01', names: new Set() };
  }

  private async query(sql: string): Promise<{ answered: true; rows: Array<Record<string, unknown>> } | { answered: false; code?: string }> {
    this.pool ??= this.createPool();
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        this.pool.query(sql),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
        }),
      ]);
      return { answered: true, rows: result.rows as Array<Record<string, unknown>> };
    } catch (err) {
      return { answered: false, code: (err as { code?: string }).code };
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
