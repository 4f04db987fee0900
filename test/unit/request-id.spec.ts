import { acceptedRequestId } from '#platform';

describe('incoming X-Request-Id', () => {
  it('is kept when it is 1 to 128 letters, digits, ".", "_", ":" or "-"', () => {
    for (const id of ['a', 'req_0123456789abcdef01234567', '3f2c1a9e-7d4b-4c2a-9f1e-0a1b2c3d4e5f', 'lb.edge:01_A-z', 'x'.repeat(128)]) {
      expect(acceptedRequestId(id)).toBe(id);
    }
  });

  it('is refused when empty, longer than 128, repeated or with any other character', () => {
    for (const id of ['', 'x'.repeat(129), 'has space', 'tab\tid', 'new\nline', 'quote"', "apos'", 'semi;colon', 'slash/id', 'ünï', '<script>', 'a,b']) {
      expect(acceptedRequestId(id)).toBeUndefined();
    }
    expect(acceptedRequestId(undefined)).toBeUndefined();
    expect(acceptedRequestId(['a', 'b'])).toBeUndefined();
  });
});
