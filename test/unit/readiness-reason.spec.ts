// A readiness 503's access-log line carries why the replica is not ready.
import { type ReadinessReport, notReadyReason } from '#platform';

const report = (database: 'ok' | 'down', migrations: 'ok' | 'pending'): ReadinessReport => ({
  status: database === 'ok' && migrations === 'ok' ? 'ready' : 'not_ready',
  checks: { database, migrations, redis: 'not_configured' },
});

describe('notReadyReason', () => {
  it('is null when ready', () => {
    expect(notReadyReason(report('ok', 'ok'), false)).toBeNull();
  });

  it('names the first reason that holds: shutting down, then the database, then the migrations', () => {
    expect(notReadyReason({ ...report('ok', 'ok'), status: 'not_ready' }, true)).toBe('shutting_down');
    expect(notReadyReason(report('down', 'pending'), true)).toBe('shutting_down');
    expect(notReadyReason(report('down', 'pending'), false)).toBe('database_unreachable');
    expect(notReadyReason(report('ok', 'pending'), false)).toBe('migrations_pending');
  });
});
