/**
 * PostgreSQL's wall clock in epoch milliseconds, as a SQL expression: the one clock every
 * replica shares. Leases (durable jobs, webhook deliveries) are set and compared with it, never
 * with a time a replica passes in, so replicas whose clocks disagree cannot take over a lease
 * another still holds. `clock_timestamp()` rather than `now()`: a lease set late in a long
 * transaction still lasts its full length.
 */
export const DATABASE_NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;
