import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, rmSync, writeFileSync, closeSync, statSync } from 'node:fs';

/**
 * Background services started by the stack. Each is tagged with a marker system property so that
 * `stack:down` only ever signals a process it started: pid file AND marker in /proc/<pid>/cmdline.
 */
export interface ServiceProcess {
  readonly name: string;
  readonly marker: string;
  readonly pidFile: string;
  readonly logFile: string;
}

export function markerArg(name: string): string {
  return `-Dswap-ledger.stack=${name}`;
}

/** Whether `pid` is alive and carries exactly this marker argument. */
function carries(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker);
  } catch {
    return false;
  }
}

/** The pid of our running service, or undefined (a stale pid file is removed). */
export function runningPid(svc: ServiceProcess): number | undefined {
  if (!existsSync(svc.pidFile)) return undefined;
  const pid = Number.parseInt(readFileSync(svc.pidFile, 'utf8').trim(), 10);
  if (Number.isInteger(pid) && pid > 0 && carries(pid, svc.marker)) return pid;
  rmSync(svc.pidFile, { force: true });
  return undefined;
}

export function startDetached(
  svc: ServiceProcess,
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): number {
  const log = openSync(svc.logFile, 'a');
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`${svc.name}: could not start ${command}`);
  child.unref();
  writeFileSync(svc.pidFile, `${child.pid}\n`);
  return child.pid;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, then SIGKILL after the grace period. Returns whether a process was stopped. */
export async function stopService(svc: ServiceProcess, graceMs = 15_000): Promise<boolean> {
  const pid = runningPid(svc);
  if (pid === undefined) return false;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && carries(pid, svc.marker)) await sleep(200);
  if (carries(pid, svc.marker)) process.kill(pid, 'SIGKILL');
  while (carries(pid, svc.marker)) await sleep(100);
  rmSync(svc.pidFile, { force: true });
  return true;
}

export function logTail(file: string, lines = 40): string {
  if (!existsSync(file)) return '(no log written)';
  const size = statSync(file).size;
  const text = readFileSync(file, 'utf8').slice(Math.max(0, size - 64 * 1024));
  return text.split('\n').slice(-lines).join('\n');
}

/** Polls `probe` until it returns true; fails with the service's log tail when the deadline passes. */
export async function waitUntilReady(
  svc: ServiceProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    if (runningPid(svc) === undefined) {
      throw new Error(
        `${svc.name} exited during start-up. Last lines of ${svc.logFile}:\n${logTail(svc.logFile)}`,
      );
    }
    await sleep(500);
  }
  throw new Error(
    `${svc.name} did not become ready within ${timeoutMs / 1000}s. Last lines of ${svc.logFile}:\n${logTail(svc.logFile)}`,
  );
}
