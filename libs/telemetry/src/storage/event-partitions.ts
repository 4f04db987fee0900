/** Pure naming and date maths of the daily `events` partitions. */

export const DAY_MS = 86_400_000;
/** Events are kept for this many days of client time; older partitions are dropped whole. */
export const EVENT_RETENTION_DAYS = 90;
/** Partitions are created this many days ahead of today (UTC). */
export const PARTITION_DAYS_AHEAD = 7;
/** ... and this many days back (late deliveries land in their own day when it is still kept). */
export const PARTITION_DAYS_BEHIND = 7;

const NAME = /^events_p(\d{4})(\d{2})(\d{2})$/;

export function dayNumber(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** 'YYYY-MM-DD' of a day number. */
export function isoDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export function partitionName(day: number): string {
  return `events_p${isoDay(day).replaceAll('-', '')}`;
}

/** The day number a partition name stands for, or null for any other table (events_default). */
export function dayOfPartition(name: string): number | null {
  const match = NAME.exec(name);
  if (!match) return null;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(ms) ? null : dayNumber(ms);
}

export interface PartitionPlan {
  create: number[];
  drop: string[];
  /** Rows of the default partition received before this time are deleted. */
  purgeDefaultBeforeMs: number;
}

/**
 * What the maintenance job does at `nowMs`: create the missing days in
 * [today - behind, today + ahead] that are still within retention, drop the partitions
 * whose whole day is older than the retention.
 */
export function planPartitions(nowMs: number, existing: readonly string[], retentionDays = EVENT_RETENTION_DAYS): PartitionPlan {
  const today = dayNumber(nowMs);
  const oldestKept = today - retentionDays;
  const present = new Set(existing.map(dayOfPartition).filter((d): d is number => d !== null));
  const create: number[] = [];
  for (let day = Math.max(oldestKept, today - PARTITION_DAYS_BEHIND); day <= today + PARTITION_DAYS_AHEAD; day++) {
    if (!present.has(day)) create.push(day);
  }
  const drop = existing.filter((name) => {
    const day = dayOfPartition(name);
    return day !== null && day < oldestKept;
  });
  return { create, drop, purgeDefaultBeforeMs: nowMs - retentionDays * DAY_MS };
}
