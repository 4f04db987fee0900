/**
 * The rollup upserts of the event write: CTEs appended to the statement that writes a batch
 * holding error events or page views, fed by the rows it wrote (`ins`, first deliveries
 * only, so a retried event counts once). Each upsert groups and orders its keys, so
 * concurrent batches lock rollup rows in one order. Pure text, shared with the benchmark.
 *
 * `page.viewed` fields (the web client's): `properties.url` (its host is the analytics
 * host, lower-cased, without port), `properties.path` (else the URL's path), `referrer`
 * (its host, when it is another host than the page's), `utm_source`. A visitor is the
 * anonymous id, else the developer user id. A new visitor day moves the visitor's last day
 * (`analytics_visitor_last_days`, under its row lock, so `prev_day` is the day it really
 * left) and the per-day counts of last days follow, aggregated per host and day.
 */

/** The host of an absolute URL (`scheme://[userinfo@]host[:port]…`), lower-cased; null otherwise. */
export const URL_HOST_REGEX = '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/?#:]+)';
/** The path of an absolute URL, possibly empty. */
export const URL_PATH_REGEX = '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)';

/** Page views of the batch, with the rollup keys parsed. */
const PAGE_VIEWS_CTE = `pv AS (
  SELECT x.day, x.ts, x.visitor, x.anonymous_id, x.developer_user_id, x.host, left(x.path, 512) AS path,
         CASE WHEN x.referrer_host IS NOT NULL AND x.referrer_host <> x.host THEN left(x.referrer_host, 253) END AS referrer_host,
         NULLIF(left(x.utm_source, 128), '') AS utm_source
    FROM (SELECT client_day AS day, timestamp_ms AS ts, COALESCE(anonymous_id, developer_user_id) AS visitor, anonymous_id, developer_user_id,
                 left(lower(substring(properties->>'url' from '${URL_HOST_REGEX}')), 253) AS host,
                 COALESCE(NULLIF(properties->>'path', ''), NULLIF(substring(properties->>'url' from '${URL_PATH_REGEX}'), ''), '/') AS path,
                 lower(substring(properties->>'referrer' from '${URL_HOST_REGEX}')) AS referrer_host,
                 properties->>'utm_source' AS utm_source
            FROM ins WHERE name = 'page.viewed' AND deliveries = 1 AND json_typeof(properties) = 'object') x
   WHERE x.host IS NOT NULL
)`;

const ANALYTICS_CTES = `new_visitors AS (
  INSERT INTO analytics_daily_visitors (project_id, env, host, day, visitor)
  SELECT DISTINCT $1, $2, host, day, visitor FROM pv WHERE visitor IS NOT NULL ORDER BY 3, 4, 5
  ON CONFLICT DO NOTHING
  RETURNING host, day, visitor
), visitor_moves AS (
  INSERT INTO analytics_visitor_last_days AS l (project_id, env, host, visitor, day)
  SELECT $1, $2, host, visitor, max(day) FROM new_visitors GROUP BY host, visitor ORDER BY host, visitor
  ON CONFLICT (project_id, env, host, visitor) DO UPDATE SET day = EXCLUDED.day, prev_day = l.day WHERE l.day < EXCLUDED.day
  RETURNING host, day, prev_day
), visitor_day_counts AS (
  INSERT INTO analytics_visitor_day_counts AS c (project_id, env, host, day, visitors)
  SELECT $1, $2, host, day, sum(n) FROM (SELECT host, day, 1 AS n FROM visitor_moves
                                         UNION ALL SELECT host, prev_day, -1 FROM visitor_moves WHERE prev_day IS NOT NULL) m
   GROUP BY host, day ORDER BY host, day
  ON CONFLICT (project_id, env, host, day) DO UPDATE SET visitors = c.visitors + EXCLUDED.visitors
  RETURNING 1
), analytics_hosts AS (
  INSERT INTO analytics_daily_hosts AS h (project_id, env, host, day, views, visitors)
  SELECT $1, $2, v.host, v.day, v.views, COALESCE(n.visitors, 0)
    FROM (SELECT host, day, count(*) AS views FROM pv GROUP BY host, day) v
    LEFT JOIN (SELECT host, day, count(*) AS visitors FROM new_visitors GROUP BY host, day) n USING (host, day)
   ORDER BY v.host, v.day
  ON CONFLICT (project_id, env, host, day) DO UPDATE SET views = h.views + EXCLUDED.views, visitors = h.visitors + EXCLUDED.visitors
  RETURNING 1
), analytics_pages AS (
  INSERT INTO analytics_daily_pages AS p (project_id, env, host, day, path, views)
  SELECT $1, $2, host, day, path, count(*) FROM pv GROUP BY host, day, path ORDER BY host, day, path
  ON CONFLICT (project_id, env, host, day, path) DO UPDATE SET views = p.views + EXCLUDED.views
  RETURNING 1
), analytics_referrers AS (
  INSERT INTO analytics_daily_referrers AS r (project_id, env, host, day, referrer_host, views)
  SELECT $1, $2, host, day, referrer_host, count(*) FROM pv WHERE referrer_host IS NOT NULL
   GROUP BY host, day, referrer_host ORDER BY host, day, referrer_host
  ON CONFLICT (project_id, env, host, day, referrer_host) DO UPDATE SET views = r.views + EXCLUDED.views
  RETURNING 1
), first_touch AS (
  INSERT INTO acquisition_first_touch (project_id, env, anonymous_id, source, kind, touched_at_ms)
  SELECT DISTINCT ON (anonymous_id) $1, $2, anonymous_id, COALESCE(utm_source, referrer_host, 'direct'), 'page_view', ts
    FROM pv WHERE anonymous_id IS NOT NULL AND developer_user_id IS NULL
   ORDER BY anonymous_id, ts
  ON CONFLICT DO NOTHING
  RETURNING 1
)`;

const ERROR_CTES = `errs AS (
  SELECT fingerprint, client_day AS day, timestamp_ms AS ts, developer_user_id,
         CASE WHEN json_typeof(properties) = 'object' THEN left(properties->>'errorType', 256) END AS exception_type
    FROM ins WHERE fingerprint IS NOT NULL AND deliveries = 1
), error_days AS (
  INSERT INTO error_daily_rollups AS d (project_id, env, fingerprint, day, occurrences, first_seen_ms, last_seen_ms, exception_type)
  SELECT $1, $2, fingerprint, day, count(*), min(ts), max(ts), (array_agg(exception_type ORDER BY ts DESC))[1]
    FROM errs GROUP BY fingerprint, day ORDER BY fingerprint, day
  ON CONFLICT (project_id, env, fingerprint, day) DO UPDATE SET
    occurrences = d.occurrences + EXCLUDED.occurrences,
    first_seen_ms = LEAST(d.first_seen_ms, EXCLUDED.first_seen_ms),
    last_seen_ms = GREATEST(d.last_seen_ms, EXCLUDED.last_seen_ms),
    exception_type = CASE WHEN EXCLUDED.last_seen_ms >= d.last_seen_ms THEN COALESCE(EXCLUDED.exception_type, d.exception_type) ELSE d.exception_type END
  RETURNING 1
), error_users AS (
  INSERT INTO error_affected_users AS u (project_id, env, fingerprint, user_id, hits, first_hit_ms, last_hit_ms)
  SELECT $1, $2, fingerprint, developer_user_id, count(*), min(ts), max(ts)
    FROM errs WHERE developer_user_id IS NOT NULL GROUP BY fingerprint, developer_user_id ORDER BY fingerprint, developer_user_id
  ON CONFLICT (project_id, env, fingerprint, user_id) DO UPDATE SET
    hits = u.hits + EXCLUDED.hits,
    first_hit_ms = LEAST(u.first_hit_ms, EXCLUDED.first_hit_ms),
    last_hit_ms = GREATEST(u.last_hit_ms, EXCLUDED.last_hit_ms)
  RETURNING 1
)`;

/** The columns of the written rows the rollups read. */
export const ROLLUP_RETURNING = 'e.client_day, e.properties, e.developer_user_id, e.anonymous_id';

/** The rollup CTEs, after `ins` (and the issues upsert) in the statement's WITH list. */
export const ROLLUP_CTES = `${ERROR_CTES}, ${PAGE_VIEWS_CTE}, ${ANALYTICS_CTES}`;

/** Whether an event feeds a rollup: the write then takes the statement with the issue and rollup upserts. */
export function feedsRollups(row: { name: string; fingerprint: string | null }): boolean {
  return row.fingerprint !== null || row.name === 'page.viewed';
}
