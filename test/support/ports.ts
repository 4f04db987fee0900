import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on (just now), for a process or server the test starts
 * later. Chosen below Linux's ephemeral range (32768-60999): the in-process test apps of other
 * workers bind ephemeral ports all the time (supertest listens on port 0 per request), and
 * one of them taking the port between this check and the child's listen made a child's probe
 * reach the wrong server.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(port)) return port;
  }
  throw new Error('no free loopback port in 20000-31999 after 50 tries');
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
