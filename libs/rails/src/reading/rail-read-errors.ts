/**
 * A rail's API could not be read: no credentials configured for the rail, a timeout, a `429`,
 * a `5xx`, a network error, or an answer the service cannot use. The read is reported as
 * `unavailable` and the stored state governs. Messages never carry a credential.
 */
export class RailReadUnavailable extends Error {
  constructor(
    message: string,
    /** Set when the store asked to slow down (`429`, `Retry-After`) or answered `5xx`: the project's reads of the rail back off. */
    readonly backOff: boolean = false,
    /** The store's Retry-After in ms, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'RailReadUnavailable';
  }
}

/** Whether an HTTP status of a store asks the caller to back off (`429`, `5xx`). */
export function backsOff(status: number | undefined): boolean {
  return status === 429 || (status !== undefined && status >= 500);
}
