import { ApiError } from '#platform';
import {
  MAX_CLOCK_SKEW_MS,
  charLength,
  clampTimestamp,
  dayOf,
  isStorableJson,
  isStorableText,
  readEnvelope,
  sanitizeCategoryTags,
  sanitizeTags,
  serializeJson,
  stringifyParsedJson,
  utf8BytesOver,
  validateEvents,
} from '../../libs/telemetry/src/ingest/event-batch.validator.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
let seq = 0;
const newId = () => `srv_${++seq}`;

function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'page.viewed', eventId: 'evt_1', timestamp: NOW - 1000, anonymousId: 'anon_1', ...overrides };
}

function rejects(body: Record<string, unknown>): ApiError {
  try {
    validateEvents(body, NOW, newId);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the batch to be rejected');
}

/** A properties object whose JSON serialisation is exactly `bytes` bytes of UTF-8. */
function propertiesOfBytes(bytes: number, char = 'x'): Record<string, string> {
  const overhead = JSON.stringify({ k: '' }).length;
  const charBytes = Buffer.byteLength(char);
  const fill = bytes - overhead;
  const value = char.repeat(Math.floor(fill / charBytes)) + 'x'.repeat(fill % charBytes);
  const props = { k: value };
  expect(Buffer.byteLength(JSON.stringify(props))).toBe(bytes);
  return props;
}

describe('telemetry: batch validator', () => {
  describe('events array', () => {
    it('missing events is missing_required_param', () => {
      const err = rejects({});
      expect(err.code).toBe('missing_required_param');
      expect(err.message).toContain('events');
    });

    it('events must be an array of 1 to 100', () => {
      expect(rejects({ events: {} }).message).toBe('events: must be an array');
      expect(rejects({ events: [] }).code).toBe('invalid_param_value');
      const hundred = Array.from({ length: 100 }, (_, i) => event({ eventId: `e${i}` }));
      expect(validateEvents({ events: hundred }, NOW, newId).events).toHaveLength(100);
      const err = rejects({ events: [...hundred, event()] });
      expect(err.code).toBe('invalid_param_value');
      expect(err.message).toContain('got 101');
    });
  });

  describe('per-event rules (all-or-nothing, index and field named)', () => {
    it('names the index and field of the first failure', () => {
      const events = Array.from({ length: 10 }, () => event());
      events[7] = event({ name: 'x'.repeat(129) });
      events[9] = event({ name: '' });
      const err = rejects({ events });
      expect(err.code).toBe('invalid_param_value');
      expect(err.status).toBe(400);
      expect(err.message).toMatch(/^events\[7\]\.name: /);
    });

    it('name: 1..128 characters, required, string', () => {
      expect(validateEvents({ events: [event({ name: 'n'.repeat(128) })] }, NOW, newId).events[0].name).toHaveLength(128);
      expect(rejects({ events: [event({ name: 'n'.repeat(129) })] }).message).toBe('events[0].name: must be 1 to 128 characters (got 129)');
      expect(rejects({ events: [event({ name: '' })] }).message).toContain('events[0].name');
      expect(rejects({ events: [event({ name: undefined })] }).message).toBe('events[0].name: is required');
      expect(rejects({ events: [event({ name: 5 })] }).message).toBe('events[0].name: must be a string');
    });

    it('counts characters, not UTF-16 units', () => {
      const emoji = '😀'.repeat(128);
      expect(validateEvents({ events: [event({ name: emoji })] }, NOW, newId).events[0].name).toBe(emoji);
      expect(rejects({ events: [event({ name: emoji + '😀' })] }).message).toContain('got 129');
    });

    it('eventId: 1..64 characters, optional (generated when absent)', () => {
      expect(validateEvents({ events: [event({ eventId: 'e'.repeat(64) })] }, NOW, newId).events[0].eventId).toHaveLength(64);
      expect(rejects({ events: [event({ eventId: 'e'.repeat(65) })] }).message).toBe('events[0].eventId: must be 1 to 64 characters (got 65)');
      expect(rejects({ events: [event({ eventId: '' })] }).message).toContain('events[0].eventId');
      expect(rejects({ events: [event({ eventId: 12 })] }).message).toBe('events[0].eventId: must be a string');
      const generated = validateEvents({ events: [event({ eventId: undefined }), event({ eventId: null })] }, NOW, newId).events;
      expect(generated[0].eventId).toMatch(/^srv_/);
      expect(generated[1].eventId).not.toBe(generated[0].eventId);
      expect(generated[0].clientEventId).toBe(false);
    });

    it('timestamp: integer ms, clamped beyond +/-24 h, receive time when absent', () => {
      const [inside, past, future, edge, absent] = validateEvents(
        {
          events: [
            event({ timestamp: NOW - 5000 }),
            event({ timestamp: NOW - MAX_CLOCK_SKEW_MS - 1 }),
            event({ timestamp: NOW + MAX_CLOCK_SKEW_MS + 1 }),
            event({ timestamp: NOW - MAX_CLOCK_SKEW_MS }),
            event({ timestamp: undefined }),
          ],
        },
        NOW,
        newId,
      ).events;
      expect(inside.timestampMs).toBe(NOW - 5000);
      expect(past.timestampMs).toBe(NOW);
      expect(past.clientTimestampMs).toBe(NOW - MAX_CLOCK_SKEW_MS - 1);
      expect(future.timestampMs).toBe(NOW);
      expect(edge.timestampMs).toBe(NOW - MAX_CLOCK_SKEW_MS);
      expect(absent.timestampMs).toBe(NOW);
      expect(absent.clientTimestampMs).toBeNull();
      expect(rejects({ events: [event({ timestamp: 1.5 })] }).message).toBe('events[0].timestamp: must be an integer (Unix milliseconds)');
      expect(rejects({ events: [event({ timestamp: '1700000000000' })] }).message).toContain('events[0].timestamp');
    });

    it('the partition day follows the client timestamp, so it is the same on every retry', () => {
      const clamped = validateEvents({ events: [event({ timestamp: NOW - 3 * MAX_CLOCK_SKEW_MS })] }, NOW, newId).events[0];
      const retried = validateEvents({ events: [event({ timestamp: NOW - 3 * MAX_CLOCK_SKEW_MS })] }, NOW + 86_400_000, newId).events[0];
      expect(clamped.clientDay).toBe(retried.clientDay);
      expect(clamped.clientDay).toBe(dayOf(NOW) - 3);
      expect(dayOf(-5)).toBe(0);
      expect(dayOf(Number.MAX_SAFE_INTEGER)).toBe(2_932_896);
    });

    it('properties: an object of at most 8192 bytes of JSON', () => {
      const ok = validateEvents({ events: [event({ properties: propertiesOfBytes(8192) })] }, NOW, newId).events[0];
      expect(Buffer.byteLength(ok.propertiesJson!)).toBe(8192);
      expect(rejects({ events: [event({ properties: propertiesOfBytes(8193) })] }).message).toBe(
        'events[0].properties: must be at most 8192 bytes when JSON-serialised (got 8193)',
      );
      // Multi-byte characters count as bytes, not characters.
      expect(() => validateEvents({ events: [event({ properties: propertiesOfBytes(8192, 'é') })] }, NOW, newId)).not.toThrow();
      expect(rejects({ events: [event({ properties: propertiesOfBytes(8193, 'é') })] }).message).toContain('got 8193');
      expect(rejects({ events: [event({ properties: [1, 2] })] }).message).toBe('events[0].properties: must be an object');
      expect(rejects({ events: [event({ properties: 'x' })] }).message).toBe('events[0].properties: must be an object');
    });

    it('at least one identity hint; hints are strings', () => {
      const err = rejects({ events: [event(), event({ anonymousId: undefined })] });
      expect(err.message).toMatch(/^events\[1\]: at least one identity hint is required/);
      for (const hint of ['developerUserId', 'anonymousId', 'serviceCustomerId']) {
        const ok = validateEvents({ events: [event({ anonymousId: undefined, [hint]: 'h_1' })] }, NOW, newId).events[0];
        expect(ok.developerUserId ?? ok.anonymousId ?? ok.serviceCustomerId).toBe('h_1');
      }
      const several = validateEvents({ events: [event({ developerUserId: 'u', serviceCustomerId: 'cus_1' })] }, NOW, newId).events[0];
      expect([several.developerUserId, several.anonymousId, several.serviceCustomerId]).toEqual(['u', 'anon_1', 'cus_1']);
      expect(rejects({ events: [event({ anonymousId: 7 })] }).message).toBe('events[0].anonymousId: must be a string');
      expect(rejects({ events: [event({ anonymousId: 'a'.repeat(129) })] }).message).toContain('events[0].anonymousId');
    });

    it('an event must be an object', () => {
      expect(rejects({ events: [event(), 'x'] }).message).toBe('events[1]: must be an object');
    });

    it('refuses text PostgreSQL cannot store', () => {
      expect(rejects({ events: [event({ name: 'a\u0000b' })] }).message).toContain('events[0].name: must not contain NUL');
      expect(rejects({ events: [event({ properties: { x: 'a\ud800' } })] }).message).toContain('events[0].properties');
      expect(isStorableText('😀')).toBe(true);
      expect(isStorableText('\udc00x')).toBe(false);
      expect(isStorableJson(JSON.stringify({ a: '\\u0000 is text' }))).toBe(true);
      expect(isStorableJson(JSON.stringify({ a: '\u0000' }))).toBe(false);
      expect(isStorableJson(JSON.stringify({ '\u0000': 1 }))).toBe(false);
    });

    it('ignores unknown fields (seq, context)', () => {
      const [ev] = validateEvents({ events: [event({ seq: 4, context: { page: {} } })], seq: 1 }, NOW, newId).events;
      expect(ev.name).toBe('page.viewed');
      expect(Object.keys(ev)).not.toContain('seq');
    });
  });

  describe('soft drops (never rejected)', () => {
    it('level: kept when error|warning|info, dropped otherwise', () => {
      const out = validateEvents({ events: [event({ level: 'warning' }), event({ level: 'fatal' }), event({ level: 3 })] }, NOW, newId);
      expect(out.events.map((e) => e.level)).toEqual(['warning', null, null]);
      expect(out.softDropped).toBe(2);
    });

    it("level: an error event's properties.level when the top level has none, with the same values; the top level wins", () => {
      const error = (overrides: Record<string, unknown>) => event({ name: 'error.handled', ...overrides });
      const out = validateEvents(
        {
          events: [
            error({ properties: { fingerprint: '0123abcd', level: 'warning' } }),
            error({ level: null, properties: { level: 'info' } }),
            error({ level: 'error', properties: { level: 'info' } }),
            error({ properties: { level: 'fatal' } }),
            error({ properties: { level: 2 } }),
            error({ properties: {} }),
            event({ name: 'game.level_up', properties: { level: 'info' } }),
          ],
        },
        NOW,
        newId,
      );
      expect(out.events.map((e) => e.level)).toEqual(['warning', 'info', 'error', null, null, null, null]);
      expect(out.softDropped).toBe(2);
      expect(out.events[6].isError).toBe(false);
    });

    it('tags: offending entries dropped, at most 32 kept', () => {
      expect(sanitizeTags({ a: 'x', b: 5, c: 'y'.repeat(65), d: 'z'.repeat(64) })).toEqual({ json: JSON.stringify({ a: 'x', d: 'z'.repeat(64) }), dropped: 2 });
      expect(sanitizeTags({ ['k'.repeat(64)]: 'ok', ['k'.repeat(65)]: 'too long a key', '': 'empty key' })).toEqual({
        json: JSON.stringify({ ['k'.repeat(64)]: 'ok' }),
        dropped: 2,
      });
      const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
      const out = sanitizeTags(many);
      expect(Object.keys(JSON.parse(out.json!))).toHaveLength(32);
      expect(out.dropped).toBe(8);
      expect(sanitizeTags(['a'])).toEqual({ json: null, dropped: 1 });
      expect(sanitizeTags('a')).toEqual({ json: null, dropped: 1 });
      expect(sanitizeTags({ a: 1 })).toEqual({ json: null, dropped: 1 });
      expect(sanitizeTags({})).toEqual({ json: null, dropped: 0 });
      const hostile = JSON.parse('{"__proto__": "x", "b": 5}');
      expect(JSON.parse(sanitizeTags(hostile).json!)).toEqual(JSON.parse('{"__proto__": "x"}'));
    });

    it('categoryTags: offending entries dropped, at most 16 kept', () => {
      expect(sanitizeCategoryTags(['a', 5, 'b'.repeat(33), '', 'c'.repeat(32)])).toEqual({ json: JSON.stringify(['a', 'c'.repeat(32)]), dropped: 3 });
      const out = sanitizeCategoryTags(Array.from({ length: 20 }, (_, i) => `t${i}`));
      expect(JSON.parse(out.json!)).toHaveLength(16);
      expect(out.dropped).toBe(4);
      expect(sanitizeCategoryTags({ a: 'b' })).toEqual({ json: null, dropped: 1 });
    });

    it('a batch with malformed soft fields still validates', () => {
      const out = validateEvents({ events: [event({ level: 'nope', tags: 'x', categoryTags: 'y' })] }, NOW, newId);
      expect(out.events[0]).toEqual(expect.objectContaining({ level: null, tagsJson: null, categoryTagsJson: null }));
      expect(out.softDropped).toBe(3);
    });
  });

  describe('error events and fingerprints', () => {
    it('error.* names and any valid level are error events; the fingerprint is 8 hex characters', () => {
      const out = validateEvents(
        {
          events: [
            event({ name: 'error.unhandled', properties: { fingerprint: 'DEADBEEF' } }),
            event({ name: 'checkout.failed', level: 'error', properties: { fingerprint: '0123abcd' } }),
            event({ name: 'error.http', properties: { fingerprint: 'xyz' } }),
            event({ name: 'page.viewed', properties: { fingerprint: '0123abcd' } }),
            event({ name: 'error.message' }),
          ],
        },
        NOW,
        newId,
      ).events;
      expect(out.map((e) => [e.isError, e.fingerprint])).toEqual([
        [true, 'deadbeef'],
        [true, '0123abcd'],
        [true, null],
        [false, null],
        [true, null],
      ]);
    });
  });

  describe('envelope', () => {
    it('reads appId, sdk and envelopeVersion (observed, not enforced)', () => {
      expect(readEnvelope({ appId: 'app_1', sdk: { name: '@service/web', version: '1.2.0' }, envelopeVersion: 2 })).toEqual({
        appId: 'app_1',
        sdk: { name: '@service/web', version: '1.2.0' },
        envelopeVersion: 2,
      });
      expect(readEnvelope({ envelopeVersion: 'two' }).envelopeVersion).toBeNull();
      expect(() => readEnvelope({ sdk: 'web@1' })).toThrow('sdk: must be an object');
      expect(() => readEnvelope({ sdk: { name: 'web' } })).toThrow('sdk.version');
      expect(() => readEnvelope({ appId: 5 })).toThrow('appId: must be a string');
    });
  });

  describe('helpers', () => {
    it('charLength counts code points only when it matters', () => {
      expect(charLength('abc', 10)).toBe(3);
      expect(charLength('😀😀', 3)).toBe(2);
    });

    it('utf8BytesOver', () => {
      expect(utf8BytesOver('a'.repeat(100), 8192)).toBe(false);
      expect(utf8BytesOver('a'.repeat(8193), 8192)).toBe(8193);
      expect(utf8BytesOver('é'.repeat(4097), 8192)).toBe(8194);
    });

    it('clampTimestamp', () => {
      expect(clampTimestamp(NOW + MAX_CLOCK_SKEW_MS, NOW)).toBe(NOW + MAX_CLOCK_SKEW_MS);
      expect(clampTimestamp(NOW + MAX_CLOCK_SKEW_MS + 1, NOW)).toBe(NOW);
    });

    it('isStorableJson reads escapes, not runs of backslashes, in linear time', () => {
      const cases: [unknown, boolean][] = [
        [{ a: '\\u0000' }, true],
        [{ a: '\\\u0000' }, false],
        [{ a: '\\\\u0000' }, true],
        [{ a: '\\ud800' }, true],
        [{ a: 'x\ud800' }, false],
        [{ a: '\udfff' }, false],
        [{ a: '😀\u0001\n"' }, true],
        [{ 'k\\': ['\u001f', 'é'] }, true],
      ];
      for (const [value, storable] of cases) expect(isStorableJson(JSON.stringify(value))).toBe(storable);
      // The quadratic case of a backtracking expression: 100 events' worth in well under a second.
      const json = JSON.stringify({ a: `${'\\'.repeat(4080)}\u0001` });
      const started = Date.now();
      for (let i = 0; i < 100; i++) expect(isStorableJson(json)).toBe(true);
      expect(Date.now() - started).toBeLessThan(250);
    });

    it('serializeJson: JSON.stringify, and without recursion when nesting is too deep for it', () => {
      const samples = ['{"a":[1,-0,1e309,5e-324,"x\\"y",true,null,{}],"__proto__":{"b":[]},"":"é😀\\ud800"}', '[]', '"s"', '12', 'null', '[[{}],{"x":[[]]}]'];
      for (const text of samples) {
        const value = JSON.parse(text);
        expect(stringifyParsedJson(value)).toBe(JSON.stringify(value));
        expect(serializeJson(value)).toBe(JSON.stringify(value));
      }
      const deep = JSON.parse(`{"d":${'[{"k":'.repeat(50_000)}1${'}]'.repeat(50_000)}}`);
      expect(() => JSON.stringify(deep)).toThrow(RangeError);
      expect(serializeJson(deep)).toBe(`{"d":${'[{"k":'.repeat(50_000)}1${'}]'.repeat(50_000)}}`);
      expect(rejects({ events: [event({ properties: deep })] }).message).toBe(
        'events[0].properties: must be at most 8192 bytes when JSON-serialised (got 400007)',
      );
    });
  });
});
