import type { Clock } from '../../libs/platform/src/clock/clock.js';
import { RestAsLongAsWorked } from '../../libs/reporting/src/errors/error-revenue-refresh.job.js';

/** A wall clock the test moves along with jest's fake timers. */
function wallClock() {
  let wallMs = 1_000;
  const clock = { wallNowMs: () => wallMs } as unknown as Clock;
  return {
    clock,
    work: (ms: number) => (wallMs += ms),
    wait: async (ms: number) => {
      wallMs += ms;
      await jest.advanceTimersByTimeAsync(ms);
    },
  };
}

/** Starts a rest and reports whether it has ended. */
function resting(pace: RestAsLongAsWorked) {
  let ended = false;
  void pace.rest().then(() => (ended = true));
  return { ended: () => ended };
}

describe('the error revenue refresh: its pace', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('rests as long as the work since the last rest took, so the job works at most half the time', async () => {
    const wall = wallClock();
    const pace = new RestAsLongAsWorked(wall.clock);
    expect(pace.sliceUsers).toBe(500);
    /** After `ms` of work the rest lasts exactly `ms`: not over 1 ms before, over then. */
    const restsAfterWorking = async (ms: number) => {
      wall.work(ms);
      const rest = resting(pace);
      await wall.wait(ms - 1);
      expect(rest.ended()).toBe(false);
      await wall.wait(1);
      expect(rest.ended()).toBe(true);
    };
    await restsAfterWorking(30);
    // The rest itself is not work: the next slice is measured from its end.
    await restsAfterWorking(5);
  });

  it('does not rest when no wall time passed, nor once the replica is stopping', async () => {
    const wall = wallClock();
    let stopping = false;
    const pace = new RestAsLongAsWorked(wall.clock, () => stopping);
    const idle = resting(pace);
    await jest.advanceTimersByTimeAsync(0);
    expect(idle.ended()).toBe(true);
    wall.work(50);
    stopping = true;
    const last = resting(pace);
    await jest.advanceTimersByTimeAsync(0);
    expect(last.ended()).toBe(true);
  });
});
