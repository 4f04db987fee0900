// The read API bench's project and data (bench/read-api-scale.mjs): a project whose secret key
// holds every read scope, the rollups, revenue ledger and activity of the scale phase's
// preloaded customers written straight into their tables, and the read routes over them.
import { call, withClient } from './common.mjs';
import { ORIGIN } from './read-routes.mjs';

/** The analytics host of the bench's web app (its allowed origin's). */
export const HOST = new URL(ORIGIN).hostname;
/** The preload's 24 error fingerprints (bench/phases/scale.mjs: g % 24 + 0x1a2b3c00). */
const FINGERPRINTS = Array.from({ length: 24 }, (_, i) => (0x1a2b3c00 + i).toString(16).padStart(8, '0'));
const DAYS = 90;

/** A project with a web app, the card rail on, roomy buckets and a sandbox secret key with every read scope. */
export async function mintReadProject(base, operatorToken) {
  const project = await call(base, 'POST', '/admin/v1/projects', operatorToken, { name: 'bench read api' });
  const app = await call(base, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, {
    name: 'bench web',
    platform: 'web',
    allowedOrigins: [ORIGIN],
  });
  const secretId = app.keys.find((k) => k.kind === 'secret' && k.env === 'sandbox').id;
  const scopes = ['revenue:read', 'crossmatch:read', 'reporting:aggregate', 'reporting:identity', 'errors:read', 'buckets:read'];
  const rotated = await call(base, 'POST', `/admin/v1/keys/${secretId}/rotate`, operatorToken, { scopes });
  const huge = { sustained: 1e6, burst: 1e7 };
  await call(base, 'PUT', `/admin/v1/projects/${project.id}/rate-limits`, operatorToken, { reads: huge, events: huge });
  await call(base, 'PUT', `/admin/v1/projects/${project.id}/rails/card_payments`, operatorToken, {});
  return { projectId: project.id, key: rotated.key.key };
}

/**
 * What `customers` preloaded customers (ids cdcust_pre0…, developer ids pre_user_…) leave in
 * the read side: a tenth paying on the card rail with their ledger rows and a year of daily
 * totals; error issues, 90 days of daily error rows and a tenth of the customers as affected
 * users; 90 days of host, page, referrer and visitor rows; each customer's first touch and
 * signup; each customer active on one of the last 30 days.
 */
export async function seedReadScale(url, projectId, customers) {
  const paying = Math.max(1, Math.floor(customers / 10));
  const now = Date.now();
  await withClient(url, async (client) => {
    const q = (sql, params = []) => client.query(sql, [projectId, ...params]);
    const id = `'cdcust_pre' || g`;
    await q(
      `INSERT INTO revenue_subscriptions (project_id, env, rail, subscription_id, customer_id, active, currency, monthly_minor, updated_at)
       SELECT $1, 'sandbox', 'card_payments', 'sub_' || g, ${id}, true, 'USD', 500 + g % 5000, now() FROM generate_series(0, $2::int - 1) g`,
      [paying],
    );
    await q(
      `INSERT INTO revenue_customers (project_id, env, customer_id, rail, currency, monthly_minor, subscriptions)
       SELECT $1, 'sandbox', ${id}, 'card_payments', 'USD', 500 + g % 5000, 1 FROM generate_series(0, $2::int - 1) g`,
      [paying],
    );
    await q(
      `INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor)
       SELECT $1, 'sandbox', ${id}, 'USD', 500 + g % 5000 FROM generate_series(0, $2::int - 1) g`,
      [paying],
    );
    const mrr = (await client.query(`SELECT sum(500 + g % 5000) AS s FROM generate_series(0, $1::int - 1) g`, [paying])).rows[0].s;
    for (const [rail, currency] of [
      ['all', 'USD'],
      ['all', '*'],
      ['card_payments', 'USD'],
      ['card_payments', '*'],
    ]) {
      const m = currency === '*' ? 0 : mrr;
      await q(`INSERT INTO revenue_totals (project_id, env, rail, currency, mrr_minor, paying_customers) VALUES ($1, 'sandbox', $2, $3, $4, $5)`, [
        rail,
        currency,
        m,
        paying,
      ]);
      await q(
        `INSERT INTO revenue_daily (project_id, env, rail, currency, day, mrr_minor, paying_customers)
         SELECT $1, 'sandbox', $2, $3, current_date - d, $4, $5 FROM generate_series(0, 365) d`,
        [rail, currency, m, paying],
      );
    }
    await q(
      `INSERT INTO error_issues (project_id, env, fingerprint, event_count, first_seen_ms, last_seen_ms, last_event_name, last_level, created_at_ms, updated_at_ms)
       SELECT $1, 'sandbox', f, $3::bigint, $2::bigint - 90 * 86400000::bigint, $2::bigint, 'error.unhandled', 'error', $2::bigint, $2::bigint FROM unnest($4::text[]) f
       ON CONFLICT DO NOTHING`,
      [now, customers, FINGERPRINTS],
    );
    await q(
      `INSERT INTO error_daily_rollups (project_id, env, fingerprint, day, occurrences, first_seen_ms, last_seen_ms, exception_type)
       SELECT $1, 'sandbox', f, current_date - d, 100, $2::bigint - (d + 1) * 86400000::bigint, $2::bigint - d * 86400000::bigint, 'TypeError'
         FROM unnest($3::text[]) f, generate_series(0, ${DAYS - 1}) d`,
      [now, FINGERPRINTS],
    );
    // The per-fingerprint user counts and the per-source signup counts follow these rows through their tables' triggers.
    await q(
      `INSERT INTO error_affected_users (project_id, env, fingerprint, user_id, hits, first_hit_ms, last_hit_ms)
       SELECT $1, 'sandbox', ($3::text[])[1 + g % 24], 'pre_user_' || g, 1 + g % 7, $2::bigint - g, $2::bigint - g FROM generate_series(0, $4::int - 1) g`,
      [now, FINGERPRINTS, paying],
    );
    await q(
      `INSERT INTO analytics_daily_hosts (project_id, env, host, day, views, visitors)
       SELECT $1, 'sandbox', $2, current_date - d, 10 * $3::bigint / ${DAYS}, $3::bigint / ${DAYS} FROM generate_series(0, ${DAYS - 1}) d`,
      [HOST, customers],
    );
    await q(
      `INSERT INTO analytics_daily_pages (project_id, env, host, day, path, views)
       SELECT $1, 'sandbox', $2, current_date - d, '/page/' || p, 1 + (p * 31 + d) % 1000 FROM generate_series(0, ${DAYS - 1}) d, generate_series(0, 199) p`,
      [HOST],
    );
    await q(
      `INSERT INTO analytics_daily_referrers (project_id, env, host, day, referrer_host, views)
       SELECT $1, 'sandbox', $2, current_date - d, 'ref' || r || '.example.com', 1 + (r * 17 + d) % 500 FROM generate_series(0, ${DAYS - 1}) d, generate_series(0, 49) r`,
      [HOST],
    );
    await q(
      `INSERT INTO analytics_daily_visitors (project_id, env, host, day, visitor)
       SELECT $1, 'sandbox', $2, current_date - g % ${DAYS}, 'pre_anon_' || g FROM generate_series(0, $3::int - 1) g`,
      [HOST, customers],
    );
    // The visitors' last days and their per-day counts, as the event write keeps them.
    await q(
      `INSERT INTO analytics_visitor_last_days (project_id, env, host, visitor, day)
       SELECT project_id, env, host, visitor, max(day) FROM analytics_daily_visitors WHERE project_id = $1 AND env = 'sandbox' GROUP BY project_id, env, host, visitor`,
    );
    await q(
      `INSERT INTO analytics_visitor_day_counts (project_id, env, host, day, visitors)
       SELECT project_id, env, host, day, count(*) FROM analytics_visitor_last_days WHERE project_id = $1 AND env = 'sandbox' GROUP BY project_id, env, host, day`,
    );
    await q(
      `INSERT INTO acquisition_first_touch (project_id, env, anonymous_id, source, kind, touched_at_ms)
       SELECT $1, 'sandbox', 'pre_anon_' || g, 'source' || g % 20 || '.example.com', 'page_view', $2::bigint - g FROM generate_series(0, $3::int - 1) g`,
      [now, customers],
    );
    await q(
      `INSERT INTO acquisition_signups (project_id, env, customer_id, source, counted_at_ms)
       SELECT $1, 'sandbox', ${id}, 'source' || g % 20 || '.example.com', $2::bigint - g FROM generate_series(0, $3::int - 1) g`,
      [now, customers],
    );
    await q(
      `INSERT INTO reporting_active_days (project_id, env, day, customer_id)
       SELECT $1, 'sandbox', current_date - g % 30, ${id} FROM generate_series(0, $2::int - 1) g`,
      [customers],
    );
    // Each customer's last active day and the per-day counts, as the activity feed keeps them
    // (the customer counts come from the customers triggers of the preload itself).
    await q(
      `INSERT INTO reporting_active_last_days (project_id, env, customer_id, day)
       SELECT project_id, env, customer_id, max(day) FROM reporting_active_days WHERE project_id = $1 AND env = 'sandbox' GROUP BY project_id, env, customer_id`,
    );
    await q(
      `INSERT INTO reporting_active_day_counts (project_id, env, day, customers)
       SELECT project_id, env, day, count(*) FROM reporting_active_last_days WHERE project_id = $1 AND env = 'sandbox' GROUP BY project_id, env, day`,
    );
  });
}

/** Every read of the read API, as request builders over the seeded data (the project's secret key). */
export function readApiRoutes(project, customers) {
  const headers = { authorization: `Bearer ${project.key}` };
  let n = 0;
  const any = () => (n = (n * 1103515245 + 12345) % 2147483648) % Math.max(1, customers);
  const fingerprint = () => FINGERPRINTS[any() % FINGERPRINTS.length];
  const route = (name, path) => ({ name: `GET ${name}`, headers, next: () => ({ method: 'GET', path: path() }) });
  return [
    route('/v1/revenue (total)', () => '/v1/revenue?granularity=total'),
    route('/v1/revenue (day, 90 days)', () => '/v1/revenue?granularity=day&days=90'),
    route('/v1/revenue/averages', () => '/v1/revenue/averages'),
    route('/v1/customers', () => '/v1/customers'),
    route('/v1/customers/ranked (mrr, paying)', () => '/v1/customers/ranked?by=mrr&segment=paying&limit=100&days=30'),
    route('/v1/customers/ranked (read_cost, all)', () => '/v1/customers/ranked?by=read_cost&segment=all&limit=100&days=30'),
    route('/v1/crossmatch (customerId)', () => `/v1/crossmatch?customerId=cdcust_pre${any()}`),
    route('/v1/crossmatch (userId)', () => `/v1/crossmatch?userId=pre_user_${any()}`),
    route('/v1/errors', () => `/v1/errors?fingerprint=${fingerprint()}`),
    route('/v1/errors/affected', () => `/v1/errors/affected?fingerprint=${fingerprint()}&limit=100`),
    route('/v1/acquisition', () => '/v1/acquisition?limit=100'),
    route('/v1/reporting/metrics (day, 90 days)', () => `/v1/reporting/metrics?host=${HOST}&granularity=day&days=90`),
    route('/v1/reporting/breakdown (top pages, 90 days)', () => `/v1/reporting/breakdown?host=${HOST}&dimension=top_pages&days=90&limit=50`),
    route('/v1/reporting/breakdown (top referrers, 90 days)', () => `/v1/reporting/breakdown?host=${HOST}&dimension=top_referrers&days=90&limit=50`),
    route('/v1/buckets', () => '/v1/buckets?days=30'),
    route('/v1/workspace/projects', () => '/v1/workspace/projects'),
    route('/v1/workspace/coverage', () => '/v1/workspace/coverage'),
  ];
}
