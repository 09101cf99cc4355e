import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RESTART_POLICY, RestartTracker, type RestartPolicy } from './backoff.ts';
import { formatWorkerLine } from './log-line.ts';
import { readWorkerHealth } from '../observability/worker-health.ts';

const BIN = fileURLToPath(new URL('../../bin/swap-ledger-worker.mjs', import.meta.url));

/** A worker is one `swap-ledger <command> <args>` process (see src/cli/worker.ts) with its own environment additions. */
export interface WorkerSpec {
  readonly name: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Its metrics listener (http://host:port): the worker is ready when GET /readyz answers 200. */
  readonly readyUrl?: string;
}

export interface SupervisorOptions {
  /** Where merged lines go (stdout by default). */
  readonly write?: (line: string) => void;
  readonly policy?: RestartPolicy;
  /** How long a worker has to stop after SIGTERM before SIGKILL. */
  readonly stopTimeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** A worker whose /readyz has not answered 200 this long after its start is reported NOT READY. */
  readonly readyTimeoutMs?: number;
  /** Between two reads of a starting worker's /readyz. */
  readonly readyPollMs?: number;
}

interface Running {
  readonly spec: WorkerSpec;
  child: ChildProcess | undefined;
  startedAt: number;
  exited: Promise<void>;
  readonly tracker: RestartTracker;
  restartTimer: NodeJS.Timeout | undefined;
  /** Whether its current process's /readyz answered 200 (workers without a readyUrl: never asked). */
  ready: boolean;
}

/**
 * Runs workers as child processes: one merged, prefixed log; a worker that dies is restarted with
 * backoff; `stop()` sends SIGTERM to all and waits. Exit code of `done`: 0 after a clean stop, 2 when a
 * worker refused its configuration (exit 2: restarting would not help), 1 when one kept dying or did not stop.
 */
export class Supervisor {
  private readonly workers = new Map<string, Running>();
  private readonly write: (line: string) => void;
  private stopping = false;
  private exitCode = 0;
  private resolveDone!: (code: number) => void;
  readonly done: Promise<number> = new Promise((r) => (this.resolveDone = r));
  private readonly width: number;

  constructor(
    specs: readonly WorkerSpec[],
    private readonly options: SupervisorOptions = {},
  ) {
    this.write = options.write ?? ((line) => process.stdout.write(line + '\n'));
    this.width = Math.max(6, ...specs.map((s) => s.name.length));
    for (const spec of specs)
      this.workers.set(spec.name, {
        spec,
        child: undefined,
        startedAt: 0,
        exited: Promise.resolve(),
        tracker: new RestartTracker(options.policy ?? DEFAULT_RESTART_POLICY),
        restartTimer: undefined,
        ready: false,
      });
  }

  /** The supervisor's own lines carry the prefix `up`. */
  say(message: string): void {
    this.write(formatWorkerLine('up', `${new Date().toISOString().slice(11, 19)} ${message}`, this.width));
  }

  start(): void {
    for (const w of this.workers.values()) this.spawn(w);
  }

  /** Workers with a readyUrl, by name: whether their current process has answered /readyz with 200. */
  readiness(): Record<string, boolean> {
    return Object.fromEntries(
      [...this.workers].filter(([, w]) => w.spec.readyUrl).map(([name, w]) => [name, w.ready]),
    );
  }

  /** Pids of the running workers, by name. */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries([...this.workers].map(([name, w]) => [name, w.child?.pid]));
  }

  private spawn(w: Running): void {
    const child = spawn(process.execPath, [BIN, ...w.spec.args], {
      env: { ...(this.options.env ?? process.env), ...w.spec.env },
      // The IPC channel only tells the worker when `up` is gone (see src/cli/worker.ts).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    w.child = child;
    w.startedAt = Date.now();
    for (const stream of [child.stdout!, child.stderr!])
      createInterface({ input: stream }).on('line', (line) =>
        this.write(formatWorkerLine(w.spec.name, line, this.width)),
      );
    this.say(`started ${w.spec.name} (pid ${child.pid})`);
    w.ready = false;
    void this.watchReadiness(w, child);
    w.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        w.child = undefined;
        this.onExit(w, code, signal);
        resolve();
      });
      child.once('error', (e) => this.say(`${w.spec.name} could not start: ${e.message}`));
    });
  }

  /**
   * Reads a started worker's /readyz until it answers 200, and says so; one that is not ready in
   * readyTimeoutMs is said loudly with the reason /readyz gives (and watched on: it may yet come up).
   * Ends when the process exits or everything stops.
   */
  private async watchReadiness(w: Running, child: ChildProcess): Promise<void> {
    const url = w.spec.readyUrl;
    if (!url) return;
    const started = Date.now();
    const timeout = this.options.readyTimeoutMs ?? 60_000;
    const live = () => !this.stopping && w.child === child;
    let warned = false;
    while (live()) {
      const health = await readWorkerHealth(url, 2000);
      if (!live()) return;
      const waited = Date.now() - started;
      if (health.state === 'ready') {
        w.ready = true;
        this.say(`${w.spec.name} ready: ${url}/readyz answered 200 after ${waited} ms`);
        const all = this.readiness();
        if (Object.values(all).every(Boolean)) this.say(`all workers ready (${Object.keys(all).join(', ')})`);
        return;
      }
      if (!warned && waited >= timeout) {
        warned = true;
        this.say(
          `!!! ${w.spec.name} NOT READY after ${Math.round(waited / 1000)} s (${health.state}): ${health.reason}; still waiting on ${url}/readyz`,
        );
      }
      await new Promise((r) => setTimeout(r, this.options.readyPollMs ?? 500).unref());
    }
  }

  private onExit(w: Running, code: number | null, signal: NodeJS.Signals | null): void {
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (this.stopping) {
      this.say(`${w.spec.name} stopped (${how})`);
      if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') this.exitCode ||= 1;
      return;
    }
    if (code === 2) {
      this.say(`${w.spec.name} refused its configuration (exit 2); stopping everything`);
      this.exitCode = 2;
      void this.stop();
      return;
    }
    const now = Date.now();
    const wait = w.tracker.next(now, now - w.startedAt);
    if (wait === undefined) {
      this.say(`${w.spec.name} exited (${how}) too often; giving up and stopping everything`);
      this.exitCode = 1;
      void this.stop();
      return;
    }
    this.say(`${w.spec.name} exited (${how}); restarting in ${wait} ms`);
    w.restartTimer = setTimeout(() => {
      w.restartTimer = undefined;
      if (!this.stopping) this.spawn(w);
    }, wait);
  }

  /** SIGTERM to every worker, SIGKILL to those still running after the timeout; resolves `done`. */
  async stop(): Promise<number> {
    if (this.stopping) return this.done;
    this.stopping = true;
    this.say('stopping all workers');
    const timeout = this.options.stopTimeoutMs ?? 15_000;
    await Promise.all(
      [...this.workers.values()].map(async (w) => {
        if (w.restartTimer) clearTimeout(w.restartTimer);
        const child = w.child;
        if (!child) return;
        child.kill('SIGTERM');
        const killer = setTimeout(() => {
          this.say(`${w.spec.name} did not stop in ${timeout} ms; killing it`);
          this.exitCode ||= 1;
          child.kill('SIGKILL');
        }, timeout);
        await w.exited;
        clearTimeout(killer);
      }),
    );
    this.say(`all workers stopped (exit ${this.exitCode})`);
    this.resolveDone(this.exitCode);
    return this.exitCode;
  }
}
