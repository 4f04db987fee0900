import type { MigrationInterface, QueryRunner } from 'typeorm';

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;
const SPLIT = `text NOT NULL CHECK (split IN ('none', 'rail', 'product'))`;

/** The split rows one day row (`rec`) adds to: the total (`''`), its rail, its product (unknown: `other`). */
const SPLITS = (rec: string) => `(VALUES ('none', ''), ('rail', ${rec}.rail), ('product', COALESCE(NULLIF(${rec}.product_id, ''), 'other'))) k(split, seg)`;

/** A per-day fact table summed per split into `sums`: its key columns besides the split's, and each summed column's value in a day row. */
interface SplitSums {
  days: string;
  sums: string;
  /** The trigger's argument and the key column it fills (the family or nothing), and the day row's own key columns carried over. */
  family?: string;
  keys: string[];
  values: Record<string, (rec: string) => string>;
  /** The split rows a day row adds to (default: the total, its rail, its product), and which day rows add. */
  splits?: (rec: string) => string;
  when?: (rec: string) => string;
}

/** The split rows of the day row `rec` (`k`), when it adds to any. */
const fromSplits = (s: SplitSums, rec: string) => `${(s.splits ?? SPLITS)(rec)}${s.when ? ` WHERE ${s.when(rec)}` : ''}`;

/** A state's count in a day row `r`: its net change (entered − left), or one of its counts. */
const inState = (state: string, count: (r: string) => string) => (r: string) => `CASE WHEN ${r}.state = '${state}' THEN ${count(r)} ELSE 0 END`;
const net = (r: string) => `${r}.entered - ${r}."left"`;
/** The subscription states' sums: `active` entering and leaving (the churn chart counts both), the other states' net changes. */
const LEVELS: SplitSums['values'] = {
  active_entered: inState('active', (r) => `${r}.entered`),
  active_left: inState('active', (r) => `${r}."left"`),
  trialing: inState('trialing', net),
  in_grace_period: inState('in_grace_period', net),
  in_billing_retry: inState('in_billing_retry', net),
  paused: inState('paused', net),
};

const SOURCES: SplitSums[] = [
  { days: 'subscription_state_days', sums: 'subscription_level_splits', family: 'paying', keys: [], values: LEVELS },
  { days: 'subscription_lifecycle_days', sums: 'subscription_level_splits', family: 'lifecycle', keys: [], values: LEVELS },
  {
    // The trials chart does not split: the total alone.
    days: 'subscription_trial_days',
    sums: 'subscription_trial_splits',
    keys: [],
    splits: () => `(VALUES ('none', '')) k(split, seg)`,
    values: { started: (r) => `${r}.started`, ended: (r) => `${r}.ended`, converted: (r) => `${r}.converted` },
  },
  {
    // The day table holds the total (`all`/`*`) and rail (`rail`/`*`) levels itself; a product's
    // level over every rail is the sum of its rows per rail.
    days: 'revenue_mrr_movements',
    sums: 'revenue_mrr_splits',
    keys: ['currency'],
    splits: (r) => `(VALUES ('product', COALESCE(NULLIF(${r}.product_id, ''), 'other'))) k(split, seg)`,
    when: (r) => `${r}.rail <> 'all' AND ${r}.product_id <> '*'`,
    values: Object.fromEntries(
      ['new_minor', 'expansion_minor', 'contraction_minor', 'churned_minor', 'reactivation_minor'].map((c) => [c, (r: string) => `${r}.${c}`]),
    ),
  },
  {
    days: 'revenue_day_facts',
    sums: 'revenue_day_splits',
    keys: ['currency'],
    values: { payments: (r) => `${r}.payments`, gross_minor: (r) => `${r}.gross_minor`, refunds: () => '0', refunds_minor: () => '0' },
  },
  {
    days: 'revenue_refund_days',
    sums: 'revenue_day_splits',
    keys: ['currency'],
    values: {
      payments: () => '0',
      gross_minor: () => '0',
      refunds: (r) => `${r}.refunds - ${r}.reversals`,
      refunds_minor: (r) => `${r}.refunds_minor - ${r}.reversals_minor`,
    },
  },
];

/** The columns of a sums table's rows, in insert order. */
function columns(s: SplitSums): string[] {
  return ['project_id', 'env', ...(s.family ? ['family'] : []), 'split', 'day', 'seg', ...s.keys, ...Object.keys(s.values)];
}

/** The rows a day row `rec` adds (`sign` '-' to take them away): one per split. */
function rowsOf(s: SplitSums, rec: string, sign: '' | '-', family: string): string {
  const values = Object.values(s.values).map((v) => `${sign}(${v(rec)})`);
  const keys = s.keys.map((k) => `${rec}.${k}`);
  return `SELECT ${[`${rec}.project_id`, `${rec}.env`, ...(s.family ? [family] : []), 'k.split', `${rec}.day`, 'k.seg', ...keys, ...values].join(', ')}`;
}

function upsert(s: SplitSums, select: string): string {
  const sums = Object.keys(s.values);
  return `
    INSERT INTO ${s.sums} AS s (${columns(s).join(', ')})
    ${select}
    ON CONFLICT ON CONSTRAINT ${s.sums}_pk DO UPDATE SET ${sums.map((c) => `${c} = s.${c} + EXCLUDED.${c}`).join(', ')}`;
}

/**
 * The charts' per-day facts summed per split: over every rail and product (`none`, segment
 * `''`), per rail, per product (an unknown product as `other`). A chart reads the rows of its
 * split and range from an index holding the sums, so the read touches no table page and, unsplit,
 * one row per day (and currency) instead of one per day, rail, product (and state).
 *
 * - `subscription_level_splits`: subscriptions entering and leaving `active`, and the net change
 *   of each other state, a column each, for the ledger's paying set (`paying`, from
 *   `subscription_state_days`) and the lifecycle's states (`lifecycle`, from `subscription_lifecycle_days`).
 * - `revenue_day_splits`: payments (`revenue_day_facts`), refunds and chargebacks less their
 *   reversals (`revenue_refund_days`), per currency.
 * - `revenue_mrr_splits`: MRR movements per product over every rail (`revenue_mrr_movements`
 *   holds the total and rail levels itself), per currency.
 * - `subscription_trial_splits`: trials started, ended and converted (`subscription_trial_days`),
 *   the total only (the trials chart does not split).
 *
 * Kept by a row trigger on each day table in the transaction of the day row's change, like the
 * month sums (a row's three split rows locked in one order: the total first); filled here from
 * the existing day rows, the day tables locked meanwhile.
 */
export class ChartSplitSums1790000003970 implements MigrationInterface {
  name = 'ChartSplitSums1790000003970';

  async up(q: QueryRunner): Promise<void> {
    for (const s of SOURCES) await q.query(`LOCK TABLE ${s.days} IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`
      CREATE TABLE subscription_level_splits (
        project_id text   NOT NULL,
        env        ${ENV},
        family           text   NOT NULL CHECK (family IN ('paying', 'lifecycle')),
        split            ${SPLIT},
        day              date   NOT NULL,
        seg              text   NOT NULL,
        active_entered   bigint NOT NULL,
        active_left      bigint NOT NULL,
        trialing         bigint NOT NULL,
        in_grace_period  bigint NOT NULL,
        in_billing_retry bigint NOT NULL,
        paused           bigint NOT NULL,
        CONSTRAINT subscription_level_splits_seg_ck CHECK ((split = 'none') = (seg = '')),
        CONSTRAINT subscription_level_splits_pk PRIMARY KEY (project_id, env, family, split, day, seg)
          INCLUDE (active_entered, active_left, trialing, in_grace_period, in_billing_retry, paused)
      )`);
    await q.query(`
      CREATE TABLE revenue_day_splits (
        project_id    text    NOT NULL,
        env           ${ENV},
        split         ${SPLIT},
        day           date    NOT NULL,
        seg           text    NOT NULL,
        currency      text    NOT NULL,
        payments      bigint  NOT NULL,
        gross_minor   numeric NOT NULL,
        refunds       bigint  NOT NULL,
        refunds_minor numeric NOT NULL,
        CONSTRAINT revenue_day_splits_seg_ck CHECK ((split = 'none') = (seg = '')),
        CONSTRAINT revenue_day_splits_pk PRIMARY KEY (project_id, env, currency, split, day, seg) INCLUDE (payments, gross_minor, refunds, refunds_minor)
      )`);
    await q.query(`
      CREATE TABLE subscription_trial_splits (
        project_id text   NOT NULL,
        env        ${ENV},
        split      text   NOT NULL CHECK (split = 'none'),
        day        date   NOT NULL,
        seg        text   NOT NULL CHECK (seg = ''),
        started    bigint NOT NULL,
        ended      bigint NOT NULL,
        converted  bigint NOT NULL,
        CONSTRAINT subscription_trial_splits_pk PRIMARY KEY (project_id, env, split, day, seg) INCLUDE (started, ended, converted)
      )`);
    await q.query(`
      CREATE TABLE revenue_mrr_splits (
        project_id         text    NOT NULL,
        env                ${ENV},
        split              text    NOT NULL CHECK (split = 'product'),
        day                date    NOT NULL,
        seg                text    NOT NULL,
        currency           text    NOT NULL,
        new_minor          numeric NOT NULL,
        expansion_minor    numeric NOT NULL,
        contraction_minor  numeric NOT NULL,
        churned_minor      numeric NOT NULL,
        reactivation_minor numeric NOT NULL,
        CONSTRAINT revenue_mrr_splits_pk PRIMARY KEY (project_id, env, currency, split, day, seg)
          INCLUDE (new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor)
      )`);
    for (const s of SOURCES) {
      const fn = `${s.days}_split_sums`;
      const family = s.family ? 'TG_ARGV[0]' : '';
      const sameKey = ['project_id', 'env', 'day', 'rail', 'product_id', ...s.keys].map((k) => `NEW.${k} = OLD.${k}`).join(' AND ');
      const delta = rowsOf(
        { ...s, values: Object.fromEntries(Object.entries(s.values).map(([c, v]) => [c, (r) => `${v(r)} - (${v('OLD')})`])) },
        'NEW',
        '',
        family,
      );
      await q.query(`
        CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'UPDATE' AND ${sameKey} THEN
            ${upsert(s, `${delta} FROM ${fromSplits(s, 'NEW')} ORDER BY k.split, k.seg`)};
            RETURN NULL;
          END IF;
          IF TG_OP IN ('UPDATE', 'DELETE') THEN
            ${upsert(s, `${rowsOf(s, 'OLD', '-', family)} FROM ${fromSplits(s, 'OLD')} ORDER BY k.split, k.seg`)};
          END IF;
          IF TG_OP IN ('UPDATE', 'INSERT') THEN
            ${upsert(s, `${rowsOf(s, 'NEW', '', family)} FROM ${fromSplits(s, 'NEW')} ORDER BY k.split, k.seg`)};
          END IF;
          RETURN NULL;
        END $$`);
      const cols = columns(s);
      const keyCount = cols.length - Object.keys(s.values).length;
      await q.query(
        upsert(
          s,
          `SELECT ${cols.map((c, i) => (i < keyCount ? c : `sum(${c})`)).join(', ')}
             FROM (${rowsOf(s, 'd', '', s.family ? `'${s.family}'` : '')} FROM ${s.days} d CROSS JOIN LATERAL ${fromSplits(s, 'd')}) x (${cols.join(', ')})
            GROUP BY ${cols.slice(0, keyCount).join(', ')}`,
        ),
      );
      await q.query(
        `CREATE TRIGGER ${fn} AFTER INSERT OR UPDATE OR DELETE ON ${s.days} FOR EACH ROW EXECUTE FUNCTION ${fn}(${s.family ? `'${s.family}'` : ''})`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const s of SOURCES) {
      await q.query(`DROP TRIGGER IF EXISTS ${s.days}_split_sums ON ${s.days}`);
      await q.query(`DROP FUNCTION IF EXISTS ${s.days}_split_sums()`);
    }
    await q.query(`DROP TABLE IF EXISTS revenue_mrr_splits`);
    await q.query(`DROP TABLE IF EXISTS subscription_trial_splits`);
    await q.query(`DROP TABLE IF EXISTS revenue_day_splits`);
    await q.query(`DROP TABLE IF EXISTS subscription_level_splits`);
  }
}
