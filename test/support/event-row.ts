import type { EventRow } from '../../libs/telemetry/src/storage/event-insert.sql.js';

/** A normalised event row as the validator hands it to storage (a quote in a hint and in the properties). */
export function eventRow(overrides: Partial<EventRow> = {}): EventRow {
  return {
    eventId: 'e1',
    clientDay: 20_000,
    name: 'page.viewed',
    timestampMs: 1,
    clientTimestampMs: null,
    level: null,
    fingerprint: null,
    propertiesJson: '{"a":"b\\"c"}',
    tagsJson: null,
    categoryTagsJson: '["x"]',
    developerUserId: null,
    anonymousId: 'an"on',
    serviceCustomerId: null,
    ...overrides,
  };
}
