import { INSERT_PARAM_TYPES, buildInsertStatement, dedupeAndSort, hintSetsJson } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { eventRow as row } from '../support/event-row.js';
import { asInt4, asInt8, asText, decodeBinaryArray } from '../support/pg-binary-array.js';
import { textArrayParam } from '../../libs/platform/src/database/binary-arrays.js';
import { dayOfPartition, isoDay, partitionName, planPartitions } from '../../libs/telemetry/src/storage/event-partitions.js';
import { EXHAUSTED_RETRY_MS, MAX_RESOLVE_ATTEMPTS, hintSetOutcome } from '../../libs/telemetry/src/identity/event-identity-resolver.service.js';

describe('telemetry: storage helpers', () => {
  it('one binary array per column, in the declared order; properties travel as the validator serialised them', () => {
    const meta = { projectId: 'p', env: 'sandbox', appId: 'a', receivedAtMs: 9, sdkName: null, sdkVersion: null };
    const rows = [
      row(),
      row({ eventId: 'e2', clientTimestampMs: 5, level: 'error', fingerprint: 'abcdef01', contextJson: '{"appVersion":"1.0"}', receivedAtMs: 8 }),
    ];
    const { params } = buildInsertStatement(meta, rows);
    expect(params).toHaveLength(INSERT_PARAM_TYPES.length);
    expect(params.slice(0, 7)).toEqual(['p', 'sandbox', 'a', 9, null, null, '[{"u":null,"a":"an\\"on","s":null}]']);
    const columns = params.slice(7).map((p) => decodeBinaryArray(p as Buffer));
    const oids = columns.map((c) => c.elementOid);
    // text 25, int4 23, int8 20, json 114: each matches its SQL cast.
    expect(oids).toEqual([25, 23, 25, 20, 20, 25, 25, 114, 114, 114, 114, 25, 25, 25, 20]);
    expect(INSERT_PARAM_TYPES.slice(7)).toEqual([
      'text[]',
      'int[]',
      'text[]',
      'bigint[]',
      'bigint[]',
      'text[]',
      'text[]',
      'json[]',
      'json[]',
      'json[]',
      'json[]',
      'text[]',
      'text[]',
      'text[]',
      'bigint[]',
    ]);
    const [ids, days, names, ts, cts, levels, fps, props, tags, cats, context, users, anons, services, receivedAt] = columns.map((c) => c.values);
    expect(ids.map(asText)).toEqual(['e1', 'e2']);
    expect(days.map(asInt4)).toEqual([20_000, 20_000]);
    expect(names.map(asText)).toEqual(['page.viewed', 'page.viewed']);
    expect(ts.map(asInt8)).toEqual([1, 1]);
    expect(cts.map(asInt8)).toEqual([null, 5]);
    expect(levels.map(asText)).toEqual([null, 'error']);
    expect(fps.map(asText)).toEqual([null, 'abcdef01']);
    expect(props.map(asText)).toEqual(['{"a":"b\\"c"}', '{"a":"b\\"c"}']);
    expect(tags.map(asText)).toEqual([null, null]);
    expect(cats.map(asText)).toEqual(['["x"]', '["x"]']);
    expect(context.map(asText)).toEqual([null, '{"appVersion":"1.0"}']);
    expect(users.map(asText)).toEqual([null, null]);
    expect(anons.map(asText)).toEqual(['an"on', 'an"on']);
    expect(services.map(asText)).toEqual([null, null]);
    // A row's own receive time (rows of several batches in one statement); null: the statement's ($4).
    expect(receivedAt.map(asInt8)).toEqual([null, 8]);
  });

  it('text columns carry the bytes of the string, nothing escaped', () => {
    const odd = ['plain', 'quo"te', 'back\\slash', 'tab\t', '😀', '\u2028', 'é', ''];
    const meta = { projectId: 'p', env: 'sandbox', appId: 'a', receivedAtMs: 9, sdkName: null, sdkVersion: null };
    const { params } = buildInsertStatement(
      meta,
      odd.map((name, i) => row({ eventId: `e${i}`, name })),
    );
    expect(decodeBinaryArray(params[9] as Buffer).values.map(asText)).toEqual(odd);
  });

  it('one row per (eventId, day), last one wins, in a stable order', () => {
    const rows = dedupeAndSort([
      row({ eventId: 'b', name: 'first' }),
      row({ eventId: 'a' }),
      row({ eventId: 'b', name: 'second' }),
      row({ eventId: 'b', clientDay: 1 }),
    ]);
    expect(rows.map((r) => [r.eventId, r.clientDay, r.name])).toEqual([
      ['a', 20_000, 'page.viewed'],
      ['b', 1, 'page.viewed'],
      ['b', 20_000, 'second'],
    ]);
  });

  it('one statement per batch; the issue and rollup upserts join it only when a fingerprint or a page view is present', () => {
    const meta = { projectId: 'p', env: 'sandbox', appId: 'a', receivedAtMs: 9, sdkName: null, sdkVersion: null };
    const views = buildInsertStatement(meta, [row()]);
    expect(views.withIssues).toBe(true);
    expect(views.sql).toContain('INSERT INTO analytics_daily_hosts');
    const plain = buildInsertStatement(meta, [row({ name: 'app.opened' })]);
    expect(plain.withIssues).toBe(false);
    expect(plain.sql).toContain('ON CONFLICT (project_id, env, event_id, client_day)');
    expect(plain.sql).not.toContain('error_issues');
    expect(plain.sql).not.toContain('analytics_daily_hosts');
    const errors = buildInsertStatement(meta, [row({ fingerprint: 'abcdef01' })]);
    expect(errors.withIssues).toBe(true);
    expect(errors.sql).toContain('INSERT INTO error_issues');
    expect(errors.params).toHaveLength(22);
    expect(errors.sql).toContain('INSERT INTO event_identity_hints');
    expect(plain.sql).toContain('INSERT INTO event_identity_hints');
  });

  it('with the rollups switched off (EVENT_ROLLUPS=false) the error issues stay and the per-day rollups go', () => {
    const meta = { projectId: 'p', env: 'sandbox', appId: 'a', receivedAtMs: 9, sdkName: null, sdkVersion: null };
    for (const firstDelivery of [true, false]) {
      const off = buildInsertStatement(meta, [row({ fingerprint: 'abcdef01' })], { firstDelivery, rollups: false });
      expect(off.sql).toContain('INSERT INTO error_issues');
      for (const table of ['error_daily_rollups', 'error_affected_users', 'analytics_daily_hosts', 'acquisition_first_touch'])
        expect(off.sql).not.toContain(table);
      expect(buildInsertStatement(meta, [row()], { firstDelivery }).sql).toContain('INSERT INTO error_daily_rollups');
    }
  });

  it('partition names and plan', () => {
    const day = Math.floor(Date.UTC(2026, 2, 15) / 86_400_000);
    expect(isoDay(day)).toBe('2026-03-15');
    expect(partitionName(day)).toBe('events_p20260315');
    expect(dayOfPartition('events_p20260315')).toBe(day);
    expect(dayOfPartition('events_default')).toBeNull();
    const now = Date.UTC(2026, 2, 15, 13);
    const plan = planPartitions(now, [partitionName(day), partitionName(day - 91), partitionName(day - 90), 'events_default'], 90);
    expect(plan.create).toHaveLength(14);
    expect(plan.create).not.toContain(day);
    expect(plan.create[0]).toBe(day - 7);
    expect(plan.create.at(-1)).toBe(day + 7);
    expect(plan.drop).toEqual([partitionName(day - 91)]);
    expect(plan.purgeDefaultBeforeMs).toBe(now - 90 * 86_400_000);
  });

  it('text arrays are encoded in one reused scratch buffer: every result is a copy of its own, whatever size came before or after', () => {
    const first = textArrayParam(['a', null, 'é😀']);
    const large = textArrayParam(['x'.repeat(40_000), 'ü'.repeat(20_000)]);
    const third = textArrayParam(['b', '']);
    expect(decodeBinaryArray(first).values.map(asText)).toEqual(['a', null, 'é😀']);
    expect(decodeBinaryArray(large).values.map(asText)).toEqual(['x'.repeat(40_000), 'ü'.repeat(20_000)]);
    expect(decodeBinaryArray(third).values.map(asText)).toEqual(['b', '']);
    expect(large.byteLength).toBe(20 + 8 + 40_000 + 40_000);
  });

  it('hint sets: distinct, in a stable (text) order, nulls kept', () => {
    const sets = JSON.parse(
      hintSetsJson([row({ anonymousId: 'b' }), row({ anonymousId: 'a' }), row({ anonymousId: 'b' }), row({ anonymousId: 'a', developerUserId: 'u' })]),
    );
    expect(sets).toEqual([
      { u: 'u', a: 'a', s: null },
      { u: null, a: 'a', s: null },
      { u: null, a: 'b', s: null },
    ]);
  });

  it('resolver outcomes: a hit, back-off on a miss, a long pause once exhausted, directory failures not counted', () => {
    expect(hintSetOutcome(3, 'cdcust_1', 1000)).toEqual({ pending: false, attempts: 0, afterMs: 0, customerId: 'cdcust_1' });
    expect(hintSetOutcome(0, null, 1000)).toEqual({ pending: true, attempts: 1, afterMs: 61_000, customerId: null });
    expect(hintSetOutcome(1, null, 1000)).toEqual({ pending: true, attempts: 2, afterMs: 601_000, customerId: null });
    expect(hintSetOutcome(MAX_RESOLVE_ATTEMPTS - 1, null, 1000)).toEqual({
      pending: false,
      attempts: MAX_RESOLVE_ATTEMPTS,
      afterMs: 1000 + EXHAUSTED_RETRY_MS,
      customerId: null,
    });
    expect(hintSetOutcome(MAX_RESOLVE_ATTEMPTS, null, 1000).attempts).toBe(MAX_RESOLVE_ATTEMPTS);
    expect(hintSetOutcome(2, undefined, 1000)).toEqual({ pending: true, attempts: 2, afterMs: 31_000, customerId: null });
  });
});
