// Helpers every bench script needs: a free loopback port, one statement on the admin
// database, and stopping a child process the script started.
import net from 'node:net';
import pg from 'pg';

/** A port the OS just handed out on 127.0.0.1 (free when returned). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs one statement on its own connection to `adminUrl` (CREATE/DROP DATABASE). */
export async function adminQuery(adminUrl, sql) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** SIGTERM, then SIGKILL after 15 s; resolves when `proc.child` has exited. */
export async function stop(proc) {
  if (proc.child.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.child.once('exit', resolve));
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
