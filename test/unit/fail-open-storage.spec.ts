import { Writable } from 'node:stream';
import { pino } from 'pino';
import { FailOpenStorage } from '#platform';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn', base: undefined }, stream) };
}

describe('FailOpenStorage: the limiters’ one fail-open policy', () => {
  it('passes answers through and counts nothing while the storage works', async () => {
    const { logger, lines } = capture();
    const storage = new FailOpenStorage(logger, 'test storage unavailable; failing open');
    expect(
      await storage.run(
        async () => 'stored',
        () => 'fallback',
      ),
    ).toBe('stored');
    expect(storage.failures).toBe(0);
    expect(lines).toHaveLength(0);
  });

  it('answers the fallback on any error, counts every failure, and logs at most once per interval with the count', async () => {
    const { logger, lines } = capture();
    const storage = new FailOpenStorage(logger, 'test storage unavailable; failing open');
    for (let i = 0; i < 5; i++) {
      expect(
        await storage.run(
          () => Promise.reject(new Error('Command timed out')),
          () => 'let through',
        ),
      ).toBe('let through');
    }
    expect(storage.failures).toBe(5);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'test storage unavailable; failing open', failOpenTotal: 1, err: { message: 'Command timed out' } });
  });
});
