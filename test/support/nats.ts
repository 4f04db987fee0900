import { spawnSync } from 'node:child_process';

/** Polls `probe` every 50 ms until it yields a truthy value (returned), or throws after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether a NATS server greets a connection with its INFO line (synchronous: a describe is chosen at load time). */
export function natsGreets(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `
    const s = require('node:net').connect(${Number(port) || 4222}, ${JSON.stringify(hostname)});
    const fail = () => process.exit(1);
    s.setTimeout(1000, fail); s.on('error', fail);
    s.on('data', (d) => process.exit(/^INFO /.test(String(d)) ? 0 : 1));`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}
