import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * What a test starts (the service, PostgreSQL, a NATS or HTTP stand-in) and the directories it
 * creates, stopped and removed when the test ends, and also when the test process dies without
 * running its afterAll: a detached reaper (reaper.cjs) watches this process and cleans up after
 * it. Every child is spawned detached, in a process group of its own, and stopped by group
 * (`kill -- -pid`), so its own children go with it.
 */
export class ProcessGuard {
  private readonly manifest: string;
  private readonly reaper: ChildProcess;
  private readonly reaperExit: Promise<void>;
  private readonly children = new Set<ChildProcess>();

  constructor(watchedPid = process.pid) {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-reaper-'));
    this.manifest = path.join(dir, 'manifest');
    writeFileSync(this.manifest, `dir ${dir}\n`);
    this.reaper = spawn(process.execPath, [path.join(__dirname, 'reaper.cjs'), String(watchedPid), this.manifest], { detached: true, stdio: 'ignore' });
    this.reaperExit = new Promise((resolve) => this.reaper.once('exit', () => resolve()));
    this.reaper.unref();
  }

  /** Spawns detached (its own process group), stopped by group at the end. */
  spawn(command: string, args: string[], options: SpawnOptions): ChildProcess {
    const child = spawn(command, args, { ...options, detached: true });
    if (child.pid) {
      this.children.add(child);
      appendFileSync(this.manifest, `group ${child.pid}\n`);
      child.once('exit', () => this.children.delete(child));
    }
    return child;
  }

  /** SIGKILL to the child's whole process group. */
  killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!child.pid) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  }

  /** The PostgreSQL running on this data directory (its postmaster.pid) is stopped at the end. */
  stopPostgresOf(dataDir: string): void {
    appendFileSync(this.manifest, `postgres ${dataDir}\n`);
  }

  /** Removed at the end (after the processes are stopped). */
  removeAtEnd(dir: string): void {
    appendFileSync(this.manifest, `dir ${dir}\n`);
  }

  /** Stops every group and PostgreSQL, removes every directory; resolves when done. */
  async finish(): Promise<void> {
    for (const child of this.children) this.killGroup(child);
    this.reaper.ref(); // keeps this process alive until the clean-up is done
    try {
      process.kill(this.reaper.pid!, 'SIGTERM');
    } catch {
      rmSync(path.dirname(this.manifest), { recursive: true, force: true });
      return;
    }
    await this.reaperExit;
  }
}
