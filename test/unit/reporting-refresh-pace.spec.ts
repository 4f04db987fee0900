import type { Clock } from '../../libs/platform/src/clock/clock.js';
import { RestAsLongAsWorked } from '../../libs/reporting/src/errors/error-revenue-refresh.job.js';

/** A wall clock the test moves; the timers are jest's fake ones. */
function wallClock() {
  let wallMs = 1_000;
  const clock = { wallNowMs: () => wallMs } as unknown as Clock;
  return { clock, work: (ms: number) => (wallMs += ms), rest: (ms: number) => ((wallMs += ms), jest.advanceTimersByTime(ms)) };
}

describe('the error revenue refresh: its pace', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('rests as long as the work since the last rest took, so the job holds at most half the time', async () => {
    const wall = wallClock();
    const pace = new RestAsLongAsWorked(wall.clock);
    expect(pace.sliceUsers).toBe(500);
    wall.work(30);
    let rested = false;
    const resting = pace.rest().then(() => (rested = true));
    wall.rest(29);
    await Promise.resolve();
    expect(rested).toBe(false);
    wall.rest(1);
    await resting;
    expect(rested).toBe(true);
    // The rest itself is not work: the next slice is measured from its end.
    wall.work(5);
    const next = pace.rest();
    wall.rest(5);
    await next;
  });

  it('does not rest when no wall time passed', async () => {
    const wall = wallClock();
    const pace = new RestAsLongAsWorked(wall.clock);
    await pace.rest();
  });
});
