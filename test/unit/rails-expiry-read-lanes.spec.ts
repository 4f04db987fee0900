import { ExpiryReadLanes, Slots, SweepPace, laneInFlightLimit } from '../../libs/rails/src/reconcile/expiry-read-lanes.js';

type Row = { projectId: string; rail: 'card_payments' | 'ios_store'; n: number };
const row = (projectId: string, n: number, rail: Row['rail'] = 'card_payments'): Row => ({ projectId, rail, n });
const picked = (pick: ReturnType<ExpiryReadLanes<Row>['next']>) => (pick && 'row' in pick ? pick.row.n : pick);

describe('reads at expiry: lanes of one sweep', () => {
  it('a lane starts its reads at its project rate, never a burst', () => {
    const lanes = new ExpiryReadLanes<Row>();
    lanes.add(row('p1', 1), 20);
    lanes.add(row('p1', 2));
    lanes.add(row('p1', 3));
    expect(picked(lanes.next(1_000))).toBe(1);
    expect(lanes.next(1_000)).toEqual({ waitMs: 50 });
    expect(lanes.next(1_049)).toEqual({ waitMs: 1 });
    expect(picked(lanes.next(1_050))).toBe(2);
    // Idle for a while: the next read is paced from now, not from the missed slots.
    expect(picked(lanes.next(5_000))).toBe(3);
    expect(lanes.size).toBe(0);
    expect(lanes.next(5_000)).toBeNull();
  });

  it('lanes take turns: a project with many due rows does not starve another', () => {
    const lanes = new ExpiryReadLanes<Row>();
    for (let n = 1; n <= 4; n++) lanes.add(row('busy', n), 1000);
    lanes.add(row('quiet', 10), 1000);
    const order = [];
    for (let at = 0; at < 5; at++) {
      const pick = lanes.next(at * 10);
      order.push(picked(pick));
      if (pick && 'row' in pick) lanes.done(pick.lane);
    }
    expect(order.slice(0, 2).sort()).toEqual([1, 10]);
    expect(order.slice(2)).toEqual([2, 3, 4]);
  });

  it('rails of one project are separate lanes (the read rates are per rail)', () => {
    const lanes = new ExpiryReadLanes<Row>();
    lanes.add(row('p1', 1, 'card_payments'), 1);
    lanes.add(row('p1', 2, 'card_payments'));
    lanes.add(row('p1', 3, 'ios_store'), 1);
    expect([picked(lanes.next(0)), picked(lanes.next(0))].sort()).toEqual([1, 3]);
    expect(lanes.next(0)).toEqual({ waitMs: 1000 });
  });

  it('a lane has a few reads in flight at most, so a slow rail holds few of the replica reads', () => {
    expect(laneInFlightLimit(20)).toBe(5);
    expect(laneInFlightLimit(10)).toBe(3);
    expect(laneInFlightLimit(1)).toBe(2);
    const lanes = new ExpiryReadLanes<Row>();
    for (let n = 1; n <= 4; n++) lanes.add(row('p1', n), 1);
    expect(picked(lanes.next(0))).toBe(1);
    expect(picked(lanes.next(1_000))).toBe(2);
    // Two in flight at 1 read/s: the third waits for one to end, whatever the pace says.
    expect(lanes.next(10_000)).toEqual({ waitMs: Infinity });
    lanes.done('p1\u0000card_payments');
    expect(picked(lanes.next(10_000))).toBe(3);
  });

  it('a lane told to wait keeps the row at its front until the wait passes; a longer wait drains it', () => {
    const lanes = new ExpiryReadLanes<Row>();
    lanes.add(row('p1', 1), 1000);
    lanes.add(row('p1', 2));
    lanes.add(row('p2', 3), 1000);
    const first = lanes.next(0);
    expect(picked(first)).toBe(1);
    lanes.hold((first as { lane: string }).lane, row('p1', 1), 500);
    expect(lanes.size).toBe(3);
    expect(picked(lanes.next(10))).toBe(3);
    expect(lanes.next(10)).toEqual({ waitMs: 490 });
    expect(picked(lanes.next(500))).toBe(1);
    expect(lanes.drain('p1\u0000card_payments').map((r) => r.n)).toEqual([2]);
    expect(lanes.size).toBe(0);
    lanes.add(row('p3', 4), 10);
    expect(lanes.drainAll().map((r) => r.n)).toEqual([4]);
  });
});

describe('reads at expiry: the pace of a sweep', () => {
  /** Start times (wall ms) of `rows` queued reads under the pace, starting each as soon as allowed. */
  const starts = (pace: SweepPace, rows: number, fromMs: number) => {
    const at: number[] = [];
    let nowMs = fromMs;
    for (let queued = rows; queued > 0; queued--) {
      nowMs += pace.waitMs(nowMs, queued);
      pace.started(nowMs);
      at.push(nowMs);
    }
    return at;
  };

  it('reads the queue in about its horizon, the first at once, never more than the longest spacing apart', () => {
    expect(starts(new SweepPace(10_000, 1_000), 5, 0)).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(starts(new SweepPace(10_000, 1_000), 40, 0).slice(0, 4)).toEqual([0, 257, 521, 792]);
    expect(new SweepPace(10_000, 1_000).waitMs(0, 100)).toBe(0);
  });

  it('rows coming due at a steady rate are read at that rate, without bursts', () => {
    // 28 rows come due each second; the queue settles near 280 and the reads near 28/s.
    const pace = new SweepPace(10_000, 1_000);
    let queued = 0;
    const startsPerSecond: number[] = [];
    let nextStartMs = 0;
    for (let second = 0; second < 120; second++) {
      queued += 28;
      let started = 0;
      for (let nowMs = second * 1_000; nowMs < (second + 1) * 1_000 && queued > 0;) {
        if (nowMs < nextStartMs) {
          nowMs = nextStartMs;
          continue;
        }
        const waitMs = pace.waitMs(nowMs, queued);
        if (waitMs > 0) {
          nextStartMs = nowMs + waitMs;
          continue;
        }
        pace.started(nowMs);
        queued -= 1;
        started += 1;
      }
      startsPerSecond.push(started);
    }
    const settled = startsPerSecond.slice(60);
    expect(Math.max(...settled)).toBeLessThanOrEqual(30);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(26);
    expect(queued).toBeGreaterThan(250);
    expect(queued).toBeLessThan(310);
  });

  it('a row queued after a wait starts at once; one queued later shortens the wait', () => {
    const pace = new SweepPace(10_000, 1_000);
    pace.started(0);
    expect(pace.waitMs(4_000, 1)).toBe(0);
    pace.started(4_000);
    expect(pace.waitMs(4_000, 20)).toBe(500);
    expect(pace.waitMs(4_000, 40)).toBe(250);
  });
});

describe('reads at expiry: concurrency', () => {
  it('slots run at most their size at once, the waiting ones in turn', async () => {
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const release: (() => void)[] = [];
    const work = (n: number) =>
      slots.run(async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => release.push(resolve));
        running -= 1;
        done.push(n);
      });
    const all = [1, 2, 3, 4].map(work);
    await new Promise((resolve) => setImmediate(resolve));
    expect(release).toHaveLength(2);
    while (release.length > 0) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(all);
    expect(most).toBe(2);
    expect(done).toEqual([1, 2, 3, 4]);
  });
});
