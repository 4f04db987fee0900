import { PooledPgClient } from '../../libs/platform/src/database/pooled-pg-client.js';

/** A statement as a pooled client sent it: its text with whitespace folded, and its parameters. */
export interface RecordedStatement {
  text: string;
  params: unknown[];
}

/**
 * Records every statement the service's pooled clients send while `during` runs (BEGIN and
 * COMMIT included), for tests that hold a path to its statement count. `install` in beforeAll,
 * `restore` in afterAll; `statements` holds the last `during`'s.
 */
export function statementRecorder() {
  const statements: RecordedStatement[] = [];
  const query = PooledPgClient.prototype.query;
  let recording = false;
  return {
    statements,
    install(): void {
      PooledPgClient.prototype.query = function recorded(this: PooledPgClient, config: unknown, values?: unknown, callback?: unknown) {
        const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
        if (recording && typeof text === 'string') statements.push({ text: text.replace(/\s+/g, ' ').trim(), params: Array.isArray(values) ? values : [] });
        return (query as (this: PooledPgClient, ...args: unknown[]) => unknown).call(this, config, values, callback);
      } as typeof query;
    },
    restore(): void {
      PooledPgClient.prototype.query = query;
    },
    async during<T>(work: () => Promise<T>): Promise<T> {
      statements.length = 0;
      recording = true;
      try {
        return await work();
      } finally {
        recording = false;
      }
    },
  };
}
