import type { DataSource } from 'typeorm';

/** Every row of every table, searched inside the database: which tables contain any of `secrets` as text. */
export async function tablesContaining(dataSource: DataSource, secrets: string[]): Promise<{ table: string; hits: number }[]> {
  const tables: { table_name: string }[] = await dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const out: { table: string; hits: number }[] = [];
  for (const { table_name } of tables) {
    const conditions = secrets.map((_, i) => `strpos(t::text, $${i + 1}) > 0`).join(' OR ');
    const [{ hits }] = await dataSource.query(`SELECT count(*)::int AS hits FROM "${table_name}" t WHERE ${conditions}`, secrets);
    out.push({ table: table_name, hits });
  }
  return out;
}
