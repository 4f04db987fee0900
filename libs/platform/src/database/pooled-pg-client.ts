import pg from 'pg';

/** pg's client options plus the read timeout this client applies itself (instead of pg's `query_timeout`). */
export interface PooledPgClientConfig extends pg.ClientConfig {
  readTimeoutMillis?: number;
}

/**
 * A prepared statement's name and text as `Sql` hands them to pg. pg copies every config object
 * it is given, property descriptors and all (`cloneQueryConfig`): 2.5 % of the API's busy time
 * on the public entitlement read (docs/performance.md, "What the measurements showed"). This client builds
 * the query of a NamedStatement from its text and sets the name, which is all the copy carried.
 */
export class NamedStatement {
  constructor(
    readonly name: string,
    readonly text: string,
  ) {
    Object.freeze(this);
  }
}

type QueryCallback = (err: Error | null | undefined, result?: pg.QueryResult) => void;

/**
 * The pool's pg client (TypeORM hands `extra.Client` to pg's pool). It changes only how the
 * promise form of `query(text | config, values?)`, the one TypeORM uses, waits: pg's own
 * promise form and its `query_timeout` both set the query's callback after constructing the
 * query, and a query set up that way kept its result rows reachable until the next full
 * collection: measured at 0.5 – 0.7 KB per statement promoted to the old generation on
 * Node 20 and 24 alike, none with the callback given to the constructor (docs/performance.md,
 * "What the measurements showed"). Here the query is built with its callback, and the read timeout is
 * this client's own timer with pg's behaviour: the caller gets "Query read timeout", and a
 * query still queued behind a silent one is taken off the queue so it never runs later.
 * Every other form of `query` (callbacks, submittables such as cursors) goes to pg unchanged.
 */
export class PooledPgClient extends pg.Client {
  private readonly readTimeoutMs: number;

  constructor(config?: PooledPgClientConfig) {
    super(config);
    this.readTimeoutMs = config?.readTimeoutMillis ?? 0;
  }

  // Widest signature, so that it overrides each of pg's overloads.
  override query(config: any, values?: any, callback?: any): any {
    if (config == null || typeof config.submit === 'function' || typeof values === 'function' || typeof callback === 'function') {
      return super.query(config, values, callback);
    }
    return new Promise<pg.QueryResult>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const settle: QueryCallback = (err, result) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        if (err) reject(err);
        else resolve(result as pg.QueryResult);
      };
      const query = config instanceof NamedStatement ? namedQuery(config, values, settle) : new pg.Query(config, values, settle);
      super.query(query);
      if (this.readTimeoutMs > 0) {
        timer = setTimeout(() => {
          const queued = (this as unknown as { _queryQueue?: unknown[] })._queryQueue;
          const index = queued?.indexOf(query) ?? -1;
          if (index > -1) queued?.splice(index, 1);
          settle(new Error('Query read timeout'));
        }, this.readTimeoutMs);
      }
    }).catch((err: Error) => {
      // As pg does: a stack that leads back to the caller, not to the socket's read.
      Error.captureStackTrace(err);
      throw err;
    });
  }
}

function namedQuery(statement: NamedStatement, values: unknown[] | undefined, callback: QueryCallback): pg.Query {
  const query = new pg.Query(statement.text, values, callback);
  (query as unknown as { name: string }).name = statement.name;
  return query;
}
