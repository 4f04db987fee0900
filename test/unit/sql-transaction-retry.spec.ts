import { RetryTransaction, Sql, TRANSACTION_RETRY_ATTEMPTS, isRetryableTransactionError, sqlState } from '../../libs/platform/src/database/sql.js';

/** A Sql whose data source runs each outermost transaction as a plain call (no database). */
function sqlWithoutDatabase() {
  const transactions = { opened: 0 };
  const dataSource = {
    transaction: async <T>(work: (manager: unknown) => Promise<T>): Promise<T> => {
      transactions.opened++;
      return work({});
    },
  };
  return { sql: new Sql(dataSource as never, { dbPreparedStatements: true } as never), transactions };
}

const failure = (code: string) => Object.assign(new Error(`failed with ${code}`), { code });
const wrapped = (code: string) => Object.assign(new Error('query failed'), { driverError: { code } });

describe('retryable transaction errors', () => {
  it.each([
    ['unique violation', failure('23505'), true],
    ['serialization failure', failure('40001'), true],
    ['deadlock', failure('40P01'), true],
    ['deadlock as TypeORM wraps it', wrapped('40P01'), true],
    ['RetryTransaction', new RetryTransaction('customer forgotten concurrently'), true],
    ['foreign key violation', failure('23503'), false],
    ['lock timeout', failure('55P03'), false],
    ['plain error', new Error('boom'), false],
    ['not an error', undefined, false],
  ])('%s → %s', (_name, err, retryable) => {
    expect(isRetryableTransactionError(err)).toBe(retryable);
  });

  it('reads the SQLSTATE from pg or from TypeORM', () => {
    expect(sqlState(failure('55P03'))).toBe('55P03');
    expect(sqlState(wrapped('55P03'))).toBe('55P03');
    expect(sqlState(new Error('boom'))).toBeUndefined();
  });
});

describe('Sql.transaction with retry', () => {
  it('runs a unit once without the option, whatever it throws', async () => {
    const { sql, transactions } = sqlWithoutDatabase();
    await expect(sql.transaction(() => Promise.reject(failure('23505')))).rejects.toThrow('23505');
    expect(transactions.opened).toBe(1);
  });

  it('starts a unit that lost a race over until it succeeds', async () => {
    const { sql, transactions } = sqlWithoutDatabase();
    let calls = 0;
    const result = await sql.transaction(
      async () => {
        calls++;
        if (calls < 3) throw failure('23505');
        return 'done';
      },
      { retry: true },
    );
    expect(result).toBe('done');
    expect(transactions.opened).toBe(3);
  });

  it(`gives up after ${TRANSACTION_RETRY_ATTEMPTS} attempts and rethrows the last failure`, async () => {
    const { sql, transactions } = sqlWithoutDatabase();
    await expect(sql.transaction(() => Promise.reject(new RetryTransaction('again')), { retry: true })).rejects.toBeInstanceOf(RetryTransaction);
    expect(TRANSACTION_RETRY_ATTEMPTS).toBe(6);
    expect(transactions.opened).toBe(6);
  });

  it('takes an explicit number of attempts', async () => {
    const { sql, transactions } = sqlWithoutDatabase();
    await expect(sql.transaction(() => Promise.reject(failure('40001')), { retry: { attempts: 2 } })).rejects.toThrow('40001');
    expect(transactions.opened).toBe(2);
  });

  it('never retries a failure that is not a lost race', async () => {
    const { sql, transactions } = sqlWithoutDatabase();
    await expect(sql.transaction(() => Promise.reject(failure('23503')), { retry: true })).rejects.toThrow('23503');
    expect(transactions.opened).toBe(1);
  });
});
