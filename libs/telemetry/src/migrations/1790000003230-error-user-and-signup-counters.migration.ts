import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Shard rows per scope and source of the signup counts: a writing connection adds to one of them. */
export const SIGNUP_COUNT_SHARDS = 8;

/**
 * The error and acquisition reads as point reads of counters kept with the rows they count,
 * by triggers (integrity in the schema: the event write, the erasure, the customer row's
 * cascade and bulk loads all count).
 *
 * `error_affected_user_counts`: distinct developer user ids per fingerprint, the rows of
 * `error_affected_users`. The event write's upsert inserts a (fingerprint, user) row once;
 * its statement trigger sees only the rows it inserted (the transition table of an
 * INSERT … ON CONFLICT DO UPDATE holds no updated row), so a user is counted once however
 * many batches race for it. The count row of a fingerprint is locked by the statements
 * that add a user to it, as its daily rollup row already is by every statement with the
 * error: no shards.
 *
 * `acquisition_signup_counts`: signups per first-touch source, the rows of
 * `acquisition_signups`. A signup is written by identify's transaction, so a popular source
 * would hold one row locked per signing-up transaction: a connection adds to shard
 * `pg_backend_pid() % 8` (a shard may go negative, the sum is exact). A source whose count
 * falls to zero keeps its rows.
 *
 * New rows are counted once per statement (its transition table, grouped and ordered, so
 * concurrent statements lock count rows in one order), deleted ones likewise; an update of
 * a counted key moves the row between counts. Decrements are upserts too (in the same
 * order), so the counts carry no non-negative CHECK: PostgreSQL checks an upsert's proposed
 * row before it finds the conflict.
 */
export class ErrorUserAndSignupCounters1790000003230 implements MigrationInterface {
  name = 'ErrorUserAndSignupCounters1790000003230';

  async up(q: QueryRunner): Promise<void> {
    const env = (table: string) => `env text NOT NULL CONSTRAINT ${table}_env_ck CHECK (env IN ('sandbox', 'production'))`;
    await q.query(`
      CREATE TABLE error_affected_user_counts (
        project_id  text   NOT NULL,
        ${env('error_affected_user_counts')},
        fingerprint text   NOT NULL,
        users       bigint NOT NULL,
        CONSTRAINT error_affected_user_counts_pk PRIMARY KEY (project_id, env, fingerprint)
      )`);
    await q.query(`
      CREATE TABLE acquisition_signup_counts (
        project_id text     NOT NULL,
        ${env('acquisition_signup_counts')},
        source     text     NOT NULL,
        shard      smallint NOT NULL CONSTRAINT acquisition_signup_counts_shard_ck CHECK (shard BETWEEN 0 AND ${SIGNUP_COUNT_SHARDS - 1}),
        signups    bigint   NOT NULL,
        CONSTRAINT acquisition_signup_counts_pk PRIMARY KEY (project_id, env, source, shard)
      )`);

    await q.query(`
      CREATE FUNCTION error_affected_users_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO error_affected_user_counts AS c (project_id, env, fingerprint, users)
          SELECT project_id, env, fingerprint, count(*) FROM inserted GROUP BY project_id, env, fingerprint ORDER BY project_id, env, fingerprint
          ON CONFLICT (project_id, env, fingerprint) DO UPDATE SET users = c.users + EXCLUDED.users;
        ELSE
          INSERT INTO error_affected_user_counts AS c (project_id, env, fingerprint, users)
          SELECT project_id, env, fingerprint, -count(*) FROM deleted GROUP BY project_id, env, fingerprint ORDER BY project_id, env, fingerprint
          ON CONFLICT (project_id, env, fingerprint) DO UPDATE SET users = c.users + EXCLUDED.users;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION error_affected_user_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO error_affected_user_counts AS c (project_id, env, fingerprint, users)
        SELECT * FROM (VALUES (OLD.project_id, OLD.env, OLD.fingerprint, -1::bigint), (NEW.project_id, NEW.env, NEW.fingerprint, 1::bigint)) m
         ORDER BY 1, 2, 3
        ON CONFLICT (project_id, env, fingerprint) DO UPDATE SET users = c.users + EXCLUDED.users;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION acquisition_count_signups(p_project text, p_env text, p_source text, p_delta bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO acquisition_signup_counts AS c (project_id, env, source, shard, signups)
        VALUES (p_project, p_env, p_source, pg_backend_pid() % ${SIGNUP_COUNT_SHARDS}, p_delta)
        ON CONFLICT (project_id, env, source, shard) DO UPDATE SET signups = c.signups + EXCLUDED.signups
      $$`);
    await q.query(`
      CREATE FUNCTION acquisition_signups_counted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM acquisition_count_signups(project_id, env, source, n)
             FROM (SELECT project_id, env, source, count(*) AS n FROM inserted GROUP BY project_id, env, source ORDER BY project_id, env, source) s;
        ELSE
          PERFORM acquisition_count_signups(project_id, env, source, -n)
             FROM (SELECT project_id, env, source, count(*) AS n FROM deleted GROUP BY project_id, env, source ORDER BY project_id, env, source) s;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION acquisition_signup_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM acquisition_count_signups(OLD.project_id, OLD.env, OLD.source, -1);
        PERFORM acquisition_count_signups(NEW.project_id, NEW.env, NEW.source, 1);
        RETURN NULL;
      END $$`);

    // The triggers lock both tables against writes until the backfill below commits with them.
    await q.query(`
      CREATE TRIGGER error_affected_users_inserted AFTER INSERT ON error_affected_users
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION error_affected_users_counted()`);
    await q.query(`
      CREATE TRIGGER error_affected_users_deleted AFTER DELETE ON error_affected_users
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION error_affected_users_counted()`);
    await q.query(`
      CREATE TRIGGER error_affected_user_moved AFTER UPDATE OF project_id, env, fingerprint ON error_affected_users FOR EACH ROW
        WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.env IS DISTINCT FROM NEW.env OR OLD.fingerprint IS DISTINCT FROM NEW.fingerprint)
        EXECUTE FUNCTION error_affected_user_moved()`);
    await q.query(`
      CREATE TRIGGER acquisition_signups_inserted AFTER INSERT ON acquisition_signups
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION acquisition_signups_counted()`);
    await q.query(`
      CREATE TRIGGER acquisition_signups_deleted AFTER DELETE ON acquisition_signups
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION acquisition_signups_counted()`);
    await q.query(`
      CREATE TRIGGER acquisition_signup_moved AFTER UPDATE OF project_id, env, source ON acquisition_signups FOR EACH ROW
        WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.env IS DISTINCT FROM NEW.env OR OLD.source IS DISTINCT FROM NEW.source)
        EXECUTE FUNCTION acquisition_signup_moved()`);

    await q.query(`
      INSERT INTO error_affected_user_counts (project_id, env, fingerprint, users)
      SELECT project_id, env, fingerprint, count(*) FROM error_affected_users GROUP BY project_id, env, fingerprint`);
    await q.query(`
      INSERT INTO acquisition_signup_counts (project_id, env, source, shard, signups)
      SELECT project_id, env, source, 0, count(*) FROM acquisition_signups GROUP BY project_id, env, source`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [trigger, table] of [
      ['acquisition_signup_moved', 'acquisition_signups'],
      ['acquisition_signups_deleted', 'acquisition_signups'],
      ['acquisition_signups_inserted', 'acquisition_signups'],
      ['error_affected_user_moved', 'error_affected_users'],
      ['error_affected_users_deleted', 'error_affected_users'],
      ['error_affected_users_inserted', 'error_affected_users'],
    ]) {
      await q.query(`DROP TRIGGER IF EXISTS ${trigger} ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS acquisition_signup_moved()`);
    await q.query(`DROP FUNCTION IF EXISTS acquisition_signups_counted()`);
    await q.query(`DROP FUNCTION IF EXISTS acquisition_count_signups(text, text, text, bigint)`);
    await q.query(`DROP FUNCTION IF EXISTS error_affected_user_moved()`);
    await q.query(`DROP FUNCTION IF EXISTS error_affected_users_counted()`);
    await q.query(`DROP TABLE IF EXISTS acquisition_signup_counts`);
    await q.query(`DROP TABLE IF EXISTS error_affected_user_counts`);
  }
}
