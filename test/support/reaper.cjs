// Cleans up after a test process, even one that dies without running its afterAll (killed,
// crashed, Ctrl-C): started detached by test/support/processes.ts, it watches that process and,
// when it is gone or when told (SIGTERM), stops what the manifest lists and exits.
// Usage: node reaper.cjs <watched pid> <manifest file>
// Manifest lines: "group <pgid>" (SIGKILL to the process group), "postgres <data dir>" (the
// server of postmaster.pid: fast shutdown, then SIGKILL), "dir <path>" (removed).
'use strict';
const { existsSync, readFileSync, rmSync } = require('node:fs');

const watched = Number(process.argv[2]);
const manifest = process.argv[3];

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true;
  }
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitDead(pid, ms) {
  for (let waited = 0; waited < ms && alive(pid); waited += 50) await sleep(50);
  return !alive(pid);
}

let cleaning = false;
async function cleanUp() {
  if (cleaning) return;
  cleaning = true;
  const entries = existsSync(manifest)
    ? readFileSync(manifest, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)])
    : [];
  for (const [kind, value] of entries) if (kind === 'group') signal(-Number(value), 'SIGKILL');
  for (const [kind, value] of entries) {
    if (kind !== 'postgres') continue;
    const pidFile = `${value}/postmaster.pid`;
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (!(pid > 0) || !alive(pid)) continue;
    signal(pid, 'SIGINT');
    if (!(await waitDead(pid, 10_000))) {
      signal(-pid, 'SIGKILL');
      signal(pid, 'SIGKILL');
      await waitDead(pid, 5_000);
    }
  }
  for (const [kind, value] of entries) if (kind === 'dir') rmSync(value, { recursive: true, force: true });
  rmSync(manifest, { force: true });
  process.exit(0);
}

process.on('SIGTERM', () => void cleanUp());
process.on('SIGINT', () => undefined); // a Ctrl-C meant for the test runner: keep watching it
process.on('SIGHUP', () => undefined); // the terminal closing: likewise
setInterval(() => {
  if (!alive(watched)) void cleanUp();
}, 250);
