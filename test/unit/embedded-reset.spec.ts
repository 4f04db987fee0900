// `npm run reset:dev`: the embedded data of `npm start` is removed wherever the starter keeps
// it (the checkout, or as root its staged twin under $TMPDIR), a server left running on it is
// stopped first, and production or a DATABASE_URL is refused without touching anything.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { EmbeddedResetRefusedError, embeddedDataDir, resetEmbeddedData } from '#platform';

const postgresUid = (): number | undefined => {
  const result = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  return result.status === 0 ? Number(result.stdout.trim()) : undefined;
};

describe('resetEmbeddedData (npm run reset:dev)', () => {
  let work: string;
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);

  beforeEach(() => {
    work = realpathSync(mkdtempSync(path.join(tmpdir(), 'reset-dev-')));
    lines.length = 0;
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('refuses NODE_ENV=production and a DATABASE_URL, and removes nothing', async () => {
    const dataDir = path.join(work, 'pg');
    mkdirSync(dataDir);
    await expect(resetEmbeddedData({ env: { NODE_ENV: 'production', EMBEDDED_PG_DIR: dataDir }, log })).rejects.toThrow(
      new EmbeddedResetRefusedError('NODE_ENV=production: reset:dev only removes the embedded development database'),
    );
    await expect(resetEmbeddedData({ env: { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', EMBEDDED_PG_DIR: dataDir }, log })).rejects.toThrow(
      /^DATABASE_URL is set: reset:dev only removes the embedded PostgreSQL data/,
    );
    expect(existsSync(dataDir)).toBe(true);
  });

  it('stops the server still running on the data directory, then removes it', async () => {
    const dataDir = path.join(work, 'checkout', '.data', 'pg');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path.join(dataDir, 'PG_VERSION'), '18\n');
    // A stand-in postmaster: its command line names postgres, and SIGINT ends it.
    const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'postgres'], { stdio: 'ignore' });
    const exited = new Promise<string | null>((resolve) => server.once('exit', (_code, signal) => resolve(signal)));
    try {
      writeFileSync(path.join(dataDir, 'postmaster.pid'), `${server.pid}\n${dataDir}\n`);
      const removed = await resetEmbeddedData({ env: { EMBEDDED_PG_DIR: dataDir }, log });
      expect(removed).toEqual([dataDir]);
      expect(existsSync(dataDir)).toBe(false);
      await expect(exited).resolves.toBe('SIGINT');
      expect(lines).toEqual(expect.arrayContaining([expect.stringContaining(`(pid ${server.pid})`), `removed the embedded PostgreSQL data in ${dataDir}`]));
    } finally {
      server.kill('SIGKILL');
    }
  });

  it('says so when there is nothing to remove', async () => {
    await expect(resetEmbeddedData({ env: { EMBEDDED_PG_DIR: path.join(work, 'none') }, log })).resolves.toEqual([]);
    expect(lines).toEqual([`no embedded PostgreSQL data for ${path.join(work, 'none')}: nothing to remove`]);
  });

  const asRoot = userInfo().uid === 0 && postgresUid() !== undefined ? it : it.skip;
  asRoot('as root in a 0700 checkout removes the staged twin under the temp dir that the starter uses', async () => {
    const checkout = path.join(work, 'clone'); // 0700, like mktemp -d: the postgres user cannot enter it
    mkdirSync(checkout, { mode: 0o700 });
    const requested = path.join(checkout, '.data', 'pg');
    // The twin's name derives from this test's own checkout path: no other run's data is touched.
    const twin = path.join(
      tmpdir(),
      `entitlements-embedded-pg-${postgresUid()}`,
      `data-pg-${createHash('sha256').update(requested).digest('hex').slice(0, 16)}`,
    );
    // The starter's own derivation picks that twin for this checkout.
    await expect(embeddedDataDir(requested)).resolves.toBe(twin);
    mkdirSync(twin, { recursive: true });
    writeFileSync(path.join(twin, 'PG_VERSION'), '18\n');
    const removed = await resetEmbeddedData({ env: { EMBEDDED_PG_DIR: requested }, log });
    expect(removed).toEqual([twin]);
    expect(existsSync(twin)).toBe(false);
  });
});
