import type { MigrationInterface, QueryRunner } from 'typeorm';

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;

/** A per-day fact table whose rows are summed per month, and the month table keeping the sums. */
interface MonthSums {
  days: string;
  months: string;
  /** The key columns after (project_id, env, day). */
  keys: string[];
  /** The summed columns. */
  sums: string[];
  columns: string;
}

const FAMILIES: MonthSums[] = [
  {
    days: 'subscription_state_days',
    months: 'subscription_state_months',
    keys: ['rail', 'product_id', 'state'],
    sums: ['entered', '"left"'],
    columns: `rail text NOT NULL, product_id text NOT NULL, state text NOT NULL, entered bigint NOT NULL, "left" bigint NOT NULL`,
  },
  {
    days: 'subscription_lifecycle_days',
    months: 'subscription_lifecycle_months',
    keys: ['rail', 'product_id', 'state'],
    sums: ['entered', '"left"'],
    columns: `rail text NOT NULL, product_id text NOT NULL, state text NOT NULL, entered bigint NOT NULL, "left" bigint NOT NULL`,
  },
  {
    days: 'revenue_mrr_movements',
    months: 'revenue_mrr_months',
    keys: ['rail', 'product_id', 'currency'],
    sums: ['new_minor', 'expansion_minor', 'contraction_minor', 'churned_minor', 'reactivation_minor'],
    columns: `rail text NOT NULL, product_id text NOT NULL, currency text NOT NULL, new_minor numeric NOT NULL, expansion_minor numeric NOT NULL,
              contraction_minor numeric NOT NULL, churned_minor numeric NOT NULL, reactivation_minor numeric NOT NULL`,
  },
];

/** The month table's upsert adding `sum` of each summed column to the month of the day row `rec` (NEW or OLD). */
function upsert(f: MonthSums, rec: 'NEW' | 'OLD', sum: (column: string) => string): string {
  const key = ['project_id', 'env', 'month', ...f.keys];
  return `
    INSERT INTO ${f.months} AS m (${[...key, ...f.sums].join(', ')})
    VALUES (${rec}.project_id, ${rec}.env, date_trunc('month', ${rec}.day)::date, ${f.keys.map((k) => `${rec}.${k}`).join(', ')}, ${f.sums.map(sum).join(', ')})
    ON CONFLICT ON CONSTRAINT ${f.months}_pk DO UPDATE SET ${f.sums.map((s) => `${s} = m.${s} + EXCLUDED.${s}`).join(', ')};`;
}

/**
 * Monthly sums of the charts' running-level facts: subscriptions entering and leaving each
 * state (`subscription_state_days`, `subscription_lifecycle_days`) and MRR movements
 * (`revenue_mrr_movements`), one row per month and key. A level at a range's start (the count in
 * a state, MRR) is the sum of every fact before it: read as the months before the range's month
 * plus the days of that month before it, so a chart reads only its range and a few dozen month
 * rows, however long the history.
 *
 * Kept by a row trigger on each day table, in the transaction of the day row's change (insert,
 * update — a late fact added to its day — or delete), so the month holding a late fact's day
 * is corrected with it. Filled here from the existing day rows, the day tables locked meanwhile.
 * Two indexes serve the range reads that need a part of a day's rows: one state's (the churn
 * chart's paying counts) and the MRR totals or rail rows.
 */
export class ChartLevelMonths1790000003810 implements MigrationInterface {
  name = 'ChartLevelMonths1790000003810';

  async up(q: QueryRunner): Promise<void> {
    for (const f of FAMILIES) {
      await q.query(`LOCK TABLE ${f.days} IN SHARE ROW EXCLUSIVE MODE`);
      await q.query(`
        CREATE TABLE ${f.months} (
          project_id text NOT NULL,
          env        ${ENV},
          month      date NOT NULL CHECK (extract(day FROM month) = 1),
          ${f.columns},
          CONSTRAINT ${f.months}_pk PRIMARY KEY (project_id, env, month, ${f.keys.join(', ')})
        )`);
      await q.query(`
        INSERT INTO ${f.months} (project_id, env, month, ${f.keys.join(', ')}, ${f.sums.join(', ')})
        SELECT project_id, env, date_trunc('month', day)::date, ${f.keys.join(', ')}, ${f.sums.map((s) => `sum(${s})`).join(', ')}
          FROM ${f.days} GROUP BY 1, 2, 3, ${f.keys.map((_, i) => i + 4).join(', ')}`);
      const sameMonth = ['project_id', 'env', ...f.keys].map((k) => `NEW.${k} = OLD.${k}`).join(' AND ');
      await q.query(`
        CREATE FUNCTION ${f.months}_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'UPDATE' AND ${sameMonth} AND date_trunc('month', NEW.day) = date_trunc('month', OLD.day) THEN
            ${upsert(f, 'NEW', (s) => `NEW.${s} - OLD.${s}`)}
            RETURN NULL;
          END IF;
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            ${upsert(f, 'OLD', (s) => `-OLD.${s}`)}
          END IF;
          IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ${upsert(f, 'NEW', (s) => `NEW.${s}`)}
          END IF;
          RETURN NULL;
        END $$`);
      await q.query(`CREATE TRIGGER ${f.months}_add AFTER INSERT OR UPDATE OR DELETE ON ${f.days} FOR EACH ROW EXECUTE FUNCTION ${f.months}_add()`);
    }
    // Range reads of the rows a chart needs and no others: the churn chart's paying counts, and
    // the MRR chart's totals (`all`) or rail rows (product `*`).
    await q.query(`CREATE INDEX subscription_state_days_state_idx ON subscription_state_days (project_id, env, state, day)`);
    await q.query(`CREATE INDEX revenue_mrr_movements_levels_idx ON revenue_mrr_movements (project_id, env, currency, product_id, rail, day)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS revenue_mrr_movements_levels_idx`);
    await q.query(`DROP INDEX IF EXISTS subscription_state_days_state_idx`);
    for (const f of FAMILIES) {
      await q.query(`DROP TRIGGER IF EXISTS ${f.months}_add ON ${f.days}`);
      await q.query(`DROP FUNCTION IF EXISTS ${f.months}_add()`);
      await q.query(`DROP TABLE IF EXISTS ${f.months}`);
    }
  }
}
