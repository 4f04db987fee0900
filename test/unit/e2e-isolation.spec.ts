import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The e2e suites share one database, and each app runs on a test clock of its own. Background
 * work that claims or deletes rows of every project, driven by one suite on its clock, would
 * take other suites' rows (and theirs its rows): a suite that drives it runs on a database of
 * its own (createTestApp's `ownDatabase`, or createTestDatabase).
 */
const E2E = resolve(__dirname, '../e2e');

/** What works over whole tables, as a suite names it, and why. */
const WHOLE_TABLE_WORK: [RegExp, string][] = [
  [/\bExpiryReadsJob\b/, 'reads at expiry claim every project’s due rows'],
  [/\bEventIdentityResolver\b/, 'the resolver claims every project’s due hint sets'],
  [/\bWebhookDispatcher\b/, 'the dispatcher leases every endpoint’s due deliveries'],
  [/\bEventPartitionMaintenance\b/, 'maintenance drops partitions and purges rollups of every project'],
  [/\bRevenueLapseJob\b/, 'the lapse scan lapses every project’s subscriptions'],
  [/webhooks\.report_expirations|\bExpiryScanJob\b/, 'the expiry scan reports every project’s expirations'],
  [/\.purgeExpired\(/, 'the purge deletes every tenant’s expired answers'],
];

const OWN_DATABASE = /ownDatabase: true|createTestDatabase\(/;

describe('e2e suites that run whole-table background work have a database of their own', () => {
  const suites = readdirSync(E2E).filter((name) => name.endsWith('.e2e-spec.ts'));
  const sources = new Map(suites.map((name) => [name, readFileSync(join(E2E, name), 'utf8')]));
  const reasonsOf = (source: string) => WHOLE_TABLE_WORK.filter(([pattern]) => pattern.test(source)).map(([, reason]) => reason);

  it('finds such suites (the patterns still match what the suites call)', () => {
    expect(suites.filter((name) => reasonsOf(sources.get(name)!).length > 0).length).toBeGreaterThan(10);
  });

  it('each of them runs on a database of its own', () => {
    const shared = suites
      .filter((name) => !OWN_DATABASE.test(sources.get(name)!))
      .map((name) => ({ name, reasons: reasonsOf(sources.get(name)!) }))
      .filter(({ reasons }) => reasons.length > 0);
    expect(shared).toEqual([]);
  });
});
