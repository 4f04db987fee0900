import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource, type EntityManager, QueryFailedError, type QueryRunner } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { isDatabaseUnreachable } from '../errors/database-unreachable.js';
import { NamedStatement } from './pooled-pg-client.js';

interface Ambient {
  manager: EntityManager;
  /** Names the savepoints of nested transactions on this connection uniquely. */
  savepoints: { next: number };
}

const ambient = new AsyncLocalStorage<Ambient>();

/**
 * Outermost transactions in flight. An enabled AsyncLocalStorage turns on Node's promise
 * hooks for the whole process, which roughly doubles the cost of every promise on every
 * route (measured on POST /v1/events, which never opens a transaction). So the
 * store is disabled again whenever no transaction is open; `run()` re-enables it.
 */
let openTransactions = 0;

/**
 * A statement of fixed text that each pooled connection parses and plans once, as a named
 * prepared statement, and afterwards only binds and executes. For the hot reads: their
 * execution takes a few hundredths of a millisecond, and parsing and planning them again on
 * every call cost PostgreSQL more than the execution (docs/performance.md). Only for
 * text built once (a constant, or one text per small bounded shape): each distinct text stays
 * prepared on every connection of the pool for the connection's life.
 */
export type PreparedSql = NamedStatement;

/** The statement SQL text or a prepared one; `Sql` and `runOn` take either. */
export type Statement = string | PreparedSql;

/** Names the text by its hash, so two call sites with the same text share one prepared statement. */
export function prepared(text: string): PreparedSql {
  return new NamedStatement(`q_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text);
}

const statementText = (statement: Statement): string => (typeof statement === 'string' ? statement : statement.text);

/**
 * The statement as TypeORM's `query()` takes it: TypeORM hands the query to pg as it is, and the
 * pool's client runs a NamedStatement as a prepared statement (typed as the string TypeORM
 * declares). With `prepare` false (DB_PREPARED_STATEMENTS=false) it goes as its plain text.
 */
export const typeormQuery = (statement: Statement, prepare: boolean): string =>
  typeof statement === 'string' || !prepare ? statementText(statement) : (statement as unknown as string);

/** What one statement returned: its rows and, for INSERT/UPDATE/DELETE, how many rows it touched. */
export interface SqlResult<T> {
  rows: T[];
  affected: number;
}

/** Runs one statement on `manager` (a transaction's connection, or a pooled one) and unpacks TypeORM's result. */
async function runOn<T = Record<string, unknown>>(manager: EntityManager, sql: Statement, params: unknown[] = [], prepare = true): Promise<SqlResult<T>> {
  const runner: QueryRunner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const result = await runner.query(typeormQuery(sql, prepare), params, true);
    return { rows: (result.records ?? []) as T[], affected: Number(result.affected ?? 0) };
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

/** A statement's error as TypeORM's runner raises it, so that every caller and the error filter see one shape. */
const queryFailed = (statement: Statement, params: unknown[], err: unknown): QueryFailedError =>
  new QueryFailedError(statementText(statement), params, err as Error);

/**
 * One statement on a connection of `pool` outside any transaction: what `runOn` does with the
 * data source's manager, without a TypeORM query runner. The runner is a new object per
 * statement with its own connect and release promises, two event broadcasts and a list of
 * connected runners; on the hot reads (two statements each) that was several per cent of the
 * API's CPU (docs/performance.md, "What the measurements showed"). Errors are TypeORM's
 * QueryFailedError as before. pg hands a connection's error to the running query and then
 * emits it on the client, which must have a listener while it is checked out; the pool drops
 * that client when it is released.
 */
export function runPooled<T = Record<string, unknown>>(pool: pg.Pool, sql: Statement, params: unknown[], prepare: boolean): Promise<SqlResult<T>> {
  return new Promise<SqlResult<T>>((resolve, reject) => {
    pool.connect((connectError, client, release) => {
      if (connectError || !client) {
        reject(connectError ?? new Error('No connection from the pool'));
        return;
      }
      client.on('error', ignoreCheckedOutError);
      const done = (err?: unknown): void => {
        client.removeListener('error', ignoreCheckedOutError);
        // A connection the failure broke (e.g. pg_terminate_backend: its error reaches the
        // statement before the socket closes) is discarded, not handed to the next statement.
        release(isDatabaseUnreachable(err) ? (err as Error) : undefined);
      };
      client.query(typeormQuery(sql, prepare) as string | pg.QueryConfig, params).then(
        (result) => {
          done();
          resolve({ rows: (result.rows ?? []) as T[], affected: Number(result.rowCount ?? 0) });
        },
        (err: unknown) => {
          done(err);
          reject(queryFailed(sql, params, err));
        },
      );
    });
  });
}

const ignoreCheckedOutError = (): void => undefined;

/** How a transaction joins, or starts over. */
export interface TransactionOptions {
  /**
   * Start the unit over when it lost a race (see `Sql.transaction`): `true` for
   * `TRANSACTION_RETRY_ATTEMPTS` attempts in all, or an explicit number of attempts.
   */
  retry?: boolean | { attempts: number };
}

/** Attempts in all (the first and its retries) of a `transaction(work, { retry: true })`. */
export const TRANSACTION_RETRY_ATTEMPTS = 6;

/** Thrown inside a transaction to start it over (e.g. the customer was forgotten meanwhile). */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RetryTransaction';
  }
}

// unique_violation, serialization_failure, deadlock_detected
const RETRYABLE_CODES = new Set(['23505', '40001', '40P01']);

/** The SQLSTATE of a statement's failure, as pg raises it or wrapped in TypeORM's QueryFailedError. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code ?? (err as { driverError?: { code?: unknown } } | undefined)?.driverError?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether a retrying transaction starts over after `err`: a lost race, or `RetryTransaction`. */
export function isRetryableTransactionError(err: unknown): boolean {
  if (err instanceof RetryTransaction) return true;
  const code = sqlState(err);
  return code !== undefined && RETRYABLE_CODES.has(code);
}

/** A random pause of up to 5 ms per attempt so far, so that racing units do not collide again in step. */
const retryPause = (attempt: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5 * attempt)));

/**
 * The one way repositories run SQL. It hides TypeORM's result shapes (rows for SELECT and
 * INSERT, `[rows, count]` for UPDATE and DELETE) and joins the ambient transaction: inside
 * `transaction(work)` every statement of `work`, and of anything `work` awaits, runs on that
 * transaction's connection, without passing a manager down. A nested `transaction()` becomes
 * a savepoint, so a retried or failed inner unit never aborts the outer one.
 *
 * This is what lets the platform's idempotency commit a handler's writes and its stored
 * answer together: it opens the transaction, and the handler's repositories join it.
 *
 * `transaction` is the one way to open a transaction, with `{ retry: true }` for a unit that
 * may lose a race on a constraint. Only work that needs one connection across several
 * transactions holds its own: a session advisory lock held while other units commit (the
 * migrations, the demo seed) or DDL with transactions of its own (event partition
 * maintenance).
 */
@Injectable()
export class Sql {
  private readonly prepare: boolean;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prepare = config.dbPreparedStatements;
  }

  /** The ambient transaction's manager, or the data source's (whose statements go to the pool). */
  private target(): EntityManager {
    return ambient.getStore()?.manager ?? this.dataSource.manager;
  }

  /** Runs one statement; a prepared one by its name unless DB_PREPARED_STATEMENTS=false (e.g. behind a transaction-mode pooler). */
  async run<T = Record<string, unknown>>(sql: Statement, params: unknown[] = []): Promise<SqlResult<T>> {
    const target = this.target();
    // The data source's own manager has no connection of its own: its statements go to the pool.
    const pool = target === this.dataSource.manager ? this.pool() : undefined;
    return pool ? runPooled<T>(pool, sql, params, this.prepare) : runOn<T>(target, sql, params, this.prepare);
  }

  /** pg's pool behind the data source (undefined before it is initialised: TypeORM's runner then raises its own error). */
  private pool(): pg.Pool | undefined {
    return this.dataSource.isInitialized ? (this.dataSource.driver as unknown as { master?: pg.Pool }).master : undefined;
  }

  async rows<T = Record<string, unknown>>(sql: Statement, params: unknown[] = []): Promise<T[]> {
    return (await this.run<T>(sql, params)).rows;
  }

  async one<T = Record<string, unknown>>(sql: Statement, params: unknown[] = []): Promise<T | null> {
    return (await this.run<T>(sql, params)).rows[0] ?? null;
  }

  /** Rows touched by an INSERT, UPDATE or DELETE. */
  async affected(sql: Statement, params: unknown[] = []): Promise<number> {
    return (await this.run(sql, params)).affected;
  }

  /**
   * Runs `work` in a transaction (a savepoint when one is already open) and makes it the
   * ambient one for everything `work` awaits. With `retry`, a unit that lost a race
   * (`isRetryableTransactionError`: a unique violation, a serialization failure, a deadlock,
   * or `work` threw `RetryTransaction`) is rolled back and run again, up to
   * `TRANSACTION_RETRY_ATTEMPTS` times in all, after a short random pause that grows with
   * each attempt: constraints settle races, and the next attempt re-reads what the winner
   * wrote. Inside an open transaction only the unit's savepoint is rolled back.
   */
  async transaction<T>(work: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (!options.retry) return this.runTransaction(work);
    const attempts = options.retry === true ? TRANSACTION_RETRY_ATTEMPTS : options.retry.attempts;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.runTransaction(work);
      } catch (err) {
        if (attempt >= attempts || !isRetryableTransactionError(err)) throw err;
        await retryPause(attempt);
      }
    }
  }

  private async runTransaction<T>(work: () => Promise<T>): Promise<T> {
    const outer = ambient.getStore();
    if (!outer) {
      openTransactions++;
      try {
        return await this.dataSource.transaction((manager) => ambient.run({ manager, savepoints: { next: 1 } }, work));
      } finally {
        if (--openTransactions === 0) ambient.disable();
      }
    }
    const savepoint = `sp_${outer.savepoints.next++}`;
    await outer.manager.query(`SAVEPOINT ${savepoint}`);
    try {
      const result = await work();
      await outer.manager.query(`RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (err) {
      await outer.manager.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => undefined);
      throw err;
    }
  }

  /** Runs `work` outside any ambient transaction (e.g. a failure record that must survive a rollback). */
  detached<T>(work: () => Promise<T>): Promise<T> {
    return ambient.exit(work);
  }
}
