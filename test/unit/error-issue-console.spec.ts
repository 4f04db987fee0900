import { issueTitle } from '../../libs/telemetry/src/console/issue-title.js';
import { decodeKeyset, encodeKeyset } from '../../libs/telemetry/src/console/keyset-cursor.js';

describe('issueTitle', () => {
  it('joins type and message, else uses either, else the event name', () => {
    expect(issueTitle('TypeError', 'x is undefined', 'error.unhandled')).toBe('TypeError: x is undefined');
    expect(issueTitle('TypeError', '  ', 'error.unhandled')).toBe('TypeError');
    expect(issueTitle(null, 'boom', 'error.unhandled')).toBe('boom');
    expect(issueTitle(null, null, 'error.unhandled')).toBe('error.unhandled');
  });
});

describe('keyset cursors', () => {
  it('round-trips a keyset', () => {
    expect(decodeKeyset(encodeKeyset({ value: 1_700_000_000_000, id: 'u_1' }), 'after')).toEqual({ value: 1_700_000_000_000, id: 'u_1' });
    expect(decodeKeyset(undefined, 'after')).toBeNull();
  });

  it('refuses what it did not hand out, naming the parameter', () => {
    const bad = [
      'not a cursor',
      Buffer.from('{}').toString('base64url'),
      Buffer.from('[1.5,"x"]').toString('base64url'),
      Buffer.from('[1,""]').toString('base64url'),
      'x'.repeat(800),
    ];
    for (const raw of bad) expect(() => decodeKeyset(raw, 'after')).toThrow(/after must be a cursor/);
  });
});
