import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A RAIL_SECRETS_FILE in a temporary directory, replaced atomically (as a mounted Secret is). */
export class RailSecretsFile {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'rail-secrets-'));
  readonly path = path.join(this.dir, 'rail-secrets.json');
  private counter = 0;

  constructor(content: unknown = { projects: {} }) {
    this.write(content);
  }

  write(content: unknown): void {
    this.writeText(JSON.stringify(content, null, 2));
  }

  writeText(text: string): void {
    const next = path.join(this.dir, `next-${++this.counter}.json`);
    writeFileSync(next, text);
    renameSync(next, this.path);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `check` until it passes or `timeoutMs` elapses (file reload is checked every second). */
export async function eventually(check: () => Promise<void>, timeoutMs = 6000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
