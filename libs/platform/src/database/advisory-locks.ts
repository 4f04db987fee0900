/**
 * Every PostgreSQL advisory-lock key the service takes, in one place so two uses can never
 * collide. The same on every replica.
 */
export const ADVISORY_LOCKS = {
  /** Migrations at start-up (one replica migrates, the others wait). */
  migrations: 727_001,
  /** The demo seed of an empty database. */
  demoSeed: 727_002,
  /** Audit retention purge (transaction-level). */
  auditRetention: 727_200,
  /** Daily partitions of `events` (one replica maintains them at a time). */
  eventPartitionMaintenance: 727_500,
} as const;
