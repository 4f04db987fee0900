import type { TenantScope } from '#platform';
import { type EncodedRows, concatEncodedRows } from './event-insert.sql.js';

export interface BatchWriteMeta {
  appId: string;
  receivedAtMs: number;
  sdkName: string | null;
  sdkVersion: string | null;
}

/** Rows one statement can write: one tenant, app and SDK. Each row carries its own batch's receive time. */
export interface WriteUnit {
  scope: TenantScope;
  meta: BatchWriteMeta;
  rows: EncodedRows;
}

export interface GroupCommitLimits {
  /** Statements at once: caps the share of the connection pool ingestion can take. */
  slots: number;
  /**
   * A slot beyond the first opens only once every running statement has run this long: a
   * quick statement is waited for, so that what arrives meanwhile shares the next one; a
   * slow one (a lock wait, a large group) does not hold the others back.
   */
  spareAfterMs: number;
  /** At most this many waiting units, and rows, go into one statement. */
  maxUnits: number;
  maxRows: number;
}

interface Waiting {
  unit: WriteUnit;
  key: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for event batches. At most `slots` statements run at once (the second and
 * later only once the running ones have taken `spareAfterMs`); batches that arrive while no
 * slot is open wait, and the next open slot takes the oldest with every other waiting batch
 * of the same tenant, app and SDK into one statement. Each caller is
 * answered after the commit of the statement that held its rows. An idle service writes a
 * lone batch at once; under load the statements grow, and PostgreSQL pays the statement's
 * fixed costs (hint-set and issue upserts, planning, the commit) once per group instead of
 * once per batch (docs/performance.md).
 *
 * A merged statement that fails on what a batch holds (an event in two of them, a bad
 * value) is retried batch by batch, so one batch cannot fail the others; a failure of the
 * database itself (connection, timeout, shutdown) fails every batch of the group at once.
 */
export class GroupCommit {
  private readonly waiting: Waiting[] = [];
  /** Start times (performance.now()) of the running statements, oldest first. */
  private readonly running: number[] = [];
  private scheduled = false;
  private spareTimer: NodeJS.Timeout | undefined;

  /** `onStatement`: told how many batches each statement held (the merged one, and each of a batch-by-batch retry). */
  constructor(
    private readonly limits: GroupCommitLimits,
    private readonly write: (unit: WriteUnit) => Promise<void>,
    private readonly onStatement: (batches: number) => void = () => undefined,
  ) {}

  submit(unit: WriteUnit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ unit, key: groupKey(unit), resolve, reject });
      this.schedule();
    });
  }

  get inFlight(): number {
    return this.running.length;
  }

  get queued(): number {
    return this.waiting.length;
  }

  // Batches submitted in the same turn of the event loop (the events buffer's consumer) share a statement.
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.slotOpen()) {
      const group = this.take();
      const startedAt = performance.now();
      this.running.push(startedAt);
      void this.commit(group).finally(() => {
        this.running.splice(this.running.indexOf(startedAt), 1);
        this.schedule();
      });
    }
  }

  /** The first slot is always open; another once the newest running statement has run spareAfterMs (checked again then). */
  private slotOpen(): boolean {
    if (this.running.length === 0) return true;
    if (this.running.length >= this.limits.slots) return false;
    const wait = this.running[this.running.length - 1] + this.limits.spareAfterMs - performance.now();
    if (wait <= 0) return true;
    if (!this.spareTimer) {
      this.spareTimer = setTimeout(() => {
        this.spareTimer = undefined;
        this.pump();
      }, wait);
      this.spareTimer.unref();
    }
    return false;
  }

  /** The oldest waiting batch and the later ones of its tenant, app and SDK, in order, within the bounds; the rest keep their order. */
  private take(): Waiting[] {
    const head = this.waiting[0];
    const group = [head];
    let rows = head.unit.rows.rowCount;
    let full = false;
    const rest: Waiting[] = [];
    for (let i = 1; i < this.waiting.length; i++) {
      const next = this.waiting[i];
      if (!full && next.key === head.key) {
        full = group.length >= this.limits.maxUnits || rows + next.unit.rows.rowCount > this.limits.maxRows;
        if (!full) {
          group.push(next);
          rows += next.unit.rows.rowCount;
          continue;
        }
      }
      rest.push(next);
    }
    this.waiting.splice(0, this.waiting.length, ...rest);
    return group;
  }

  private async commit(group: Waiting[]): Promise<void> {
    if (group.length === 1) return this.commitAlone(group[0]);
    try {
      this.onStatement(group.length);
      await this.write(mergeUnits(group.map((w) => w.unit)));
    } catch (err) {
      if (!causedByRows(err)) {
        for (const w of group) w.reject(err);
        return;
      }
      for (const w of group) await this.commitAlone(w);
      return;
    }
    for (const w of group) w.resolve();
  }

  private async commitAlone(w: Waiting): Promise<void> {
    try {
      this.onStatement(1);
      await this.write(w.unit);
      w.resolve();
    } catch (err) {
      w.reject(err);
    }
  }
}

function groupKey({ scope, meta }: WriteUnit): string {
  return JSON.stringify([scope.projectId, scope.env, meta.appId, meta.sdkName, meta.sdkVersion]);
}

/**
 * Units of one tenant, app and SDK as one: their rows in order (each keeps its own receive
 * time), hint sets united. The merged receive time, the hint sets' and issues' "seen" time,
 * is the latest of theirs.
 */
export function mergeUnits(units: readonly WriteUnit[]): WriteUnit {
  const [first] = units;
  if (units.length === 1) return first;
  return {
    scope: first.scope,
    meta: { ...first.meta, receivedAtMs: Math.max(...units.map((u) => u.meta.receivedAtMs)) },
    rows: concatEncodedRows(units.map((u) => u.rows)),
  };
}

/**
 * PostgreSQL errors that the rows of one batch can cause: cardinality violation (21, an
 * event in two merged batches), data exception (22), integrity constraint (23), transaction
 * rollback (40, a deadlock lost twice), program limit (54).
 */
const ROW_CAUSED_CLASSES = new Set(['21', '22', '23', '40', '54']);

function causedByRows(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && ROW_CAUSED_CLASSES.has(code.slice(0, 2));
}
