import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Read-cost reports of the bucket reporter: one row per (project, env, reporting key, UTC
 * date), replaced whole by a later report for the same date from the same key, with its
 * labels and actors in child rows (deleted with it) so that reads sum them by index.
 */
export class BucketReports1790000002400 implements MigrationInterface {
  name = 'BucketReports1790000002400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE bucket_reports (
        project_id     text   NOT NULL REFERENCES projects(id),
        env            text   NOT NULL CONSTRAINT bucket_reports_env_ck CHECK (env IN ('sandbox', 'production')),
        key_id         text   NOT NULL,
        report_date    date   NOT NULL,
        reads          bigint NOT NULL CONSTRAINT bucket_reports_reads_ck CHECK (reads >= 0),
        writes         bigint NOT NULL CONSTRAINT bucket_reports_writes_ck CHECK (writes >= 0),
        deletes        bigint NOT NULL CONSTRAINT bucket_reports_deletes_ck CHECK (deletes >= 0),
        by_hour        jsonb  NULL,
        by_minute      jsonb  NULL,
        by_actor_label jsonb  NULL,
        received_at_ms bigint NOT NULL,
        CONSTRAINT bucket_reports_pk PRIMARY KEY (project_id, env, key_id, report_date)
      )`);
    await q.query(`CREATE INDEX bucket_reports_date_idx ON bucket_reports (project_id, env, report_date)`);
    await q.query(`
      CREATE TABLE bucket_report_labels (
        project_id  text   NOT NULL,
        env         text   NOT NULL,
        key_id      text   NOT NULL,
        report_date date   NOT NULL,
        label       text   NOT NULL CONSTRAINT bucket_report_labels_label_ck CHECK (char_length(label) BETWEEN 1 AND 200),
        reads       bigint NOT NULL CONSTRAINT bucket_report_labels_reads_ck CHECK (reads >= 0),
        writes      bigint NOT NULL CONSTRAINT bucket_report_labels_writes_ck CHECK (writes >= 0),
        deletes     bigint NOT NULL CONSTRAINT bucket_report_labels_deletes_ck CHECK (deletes >= 0),
        CONSTRAINT bucket_report_labels_pk PRIMARY KEY (project_id, env, key_id, report_date, label),
        CONSTRAINT bucket_report_labels_report_fk FOREIGN KEY (project_id, env, key_id, report_date)
          REFERENCES bucket_reports (project_id, env, key_id, report_date) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX bucket_report_labels_date_idx ON bucket_report_labels (project_id, env, report_date)`);
    await q.query(`
      CREATE TABLE bucket_report_actors (
        project_id  text   NOT NULL,
        env         text   NOT NULL,
        key_id      text   NOT NULL,
        report_date date   NOT NULL,
        actor_id    text   NOT NULL CONSTRAINT bucket_report_actors_actor_ck CHECK (char_length(actor_id) BETWEEN 1 AND 256),
        reads       bigint NOT NULL CONSTRAINT bucket_report_actors_reads_ck CHECK (reads >= 0),
        CONSTRAINT bucket_report_actors_pk PRIMARY KEY (project_id, env, key_id, report_date, actor_id),
        CONSTRAINT bucket_report_actors_report_fk FOREIGN KEY (project_id, env, key_id, report_date)
          REFERENCES bucket_reports (project_id, env, key_id, report_date) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX bucket_report_actors_actor_idx ON bucket_report_actors (project_id, env, actor_id, report_date)`);
    await q.query(`CREATE INDEX bucket_report_actors_date_idx ON bucket_report_actors (project_id, env, report_date)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS bucket_report_actors`);
    await q.query(`DROP TABLE IF EXISTS bucket_report_labels`);
    await q.query(`DROP TABLE IF EXISTS bucket_reports`);
  }
}
