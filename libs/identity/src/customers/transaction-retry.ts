import type { Sql } from '#platform';

/** Thrown inside a transaction to start it over (e.g. the customer was forgotten meanwhile). */
export class RetryTransaction extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RetryTransaction';
  }
}

// unique_violation, serialization_failure, deadlock_detected
const RETRYABLE_CODES = new Set(['23505', '40001', '40P01']);

export function isRetryable(err: unknown): boolean {
  if (err instanceof RetryTransaction) return true;
  const code = (err as { code?: string; driverError?: { code?: string } })?.code ?? (err as { driverError?: { code?: string } })?.driverError?.code;
  return typeof code === 'string' && RETRYABLE_CODES.has(code);
}

/**
 * Runs `work` in a READ COMMITTED transaction and starts over when a concurrent writer won a
 * unique constraint (23505), a deadlock or serialization failure occurred, or `work` asked
 * for it. Constraints settle races; the retry re-reads what the winner wrote. It
 * joins the ambient transaction (an idempotent request's) as a savepoint,
 * so a retry rolls back only its own unit.
 */
export async function inTransactionWithRetry<T>(sql: Sql, work: () => Promise<T>, attempts = 6): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sql.transaction(work);
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 5 * attempt)));
    }
  }
}
