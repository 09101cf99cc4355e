/**
 * The one stop request of a long-running process (SIGTERM or SIGINT), listened for from the first instant:
 * a signal that arrives while the worker is still starting (loading its modules, migrating, connecting) is
 * remembered, not Node's default death by signal (status 143), and the worker stops cleanly (0) as soon as
 * its start has settled. Installed by bin/swap-ledger-worker.mjs before anything is loaded, and by every
 * serving command (runUntilSignal) for processes started through bin/swap-ledger.mjs.
 */

type StopSignal = 'SIGTERM' | 'SIGINT';

let requested: StopSignal | undefined;
let installed = false;
let waiters: ((signal: StopSignal) => void)[] = [];
let exitAfterMs: number | undefined;

/** How long a process entry (bin/) lets a stuck stop run: less than the 15 s `up` waits before SIGKILL. */
export const PROCESS_STOP_DEADLINE_MS = 12_000;
let deadline: NodeJS.Timeout | undefined;

function request(signal: StopSignal): void {
  requested ??= signal;
  if (exitAfterMs !== undefined && !deadline) {
    const ms = exitAfterMs;
    // Every worker is crash-safe by design (Postgres holds the projector's position, a webhook answers 200
    // only once Kafka has the event, the outbox keeps the gateway's), so a stop stuck on a peer ends here
    // rather than by `up`'s SIGKILL: said on stderr, and a restart resumes from what is stored.
    deadline = setTimeout(() => {
      process.stderr.write(
        `swap-ledger: still stopping ${ms / 1000} s after ${signal}; exiting without waiting any longer\n`,
      );
      process.exit(process.exitCode ?? 0);
    }, ms).unref();
  }
  const now = waiters;
  waiters = [];
  for (const w of now) w(requested);
}

/**
 * Listens for SIGTERM and SIGINT from now on; `early`: a signal noted before this module was loaded.
 * `exitAfterMs`, for a process entry only (bin/): the process ends that long after a stop request if its stop
 * has not ended it by then.
 */
export function installStopSignal(early?: StopSignal, options: { exitAfterMs?: number } = {}): void {
  if (!installed) {
    installed = true;
    process.on('SIGTERM', () => request('SIGTERM'));
    process.on('SIGINT', () => request('SIGINT'));
  }
  if (options.exitAfterMs !== undefined) exitAfterMs = options.exitAfterMs;
  if (early) request(early);
}

/** The signal that asked this process to stop, if one did. */
export function stopRequested(): StopSignal | undefined {
  return requested;
}

/** Resolves once a stop is requested (at once if one was already). */
export function whenStopRequested(): Promise<StopSignal> {
  installStopSignal();
  if (requested) return Promise.resolve(requested);
  return new Promise((resolve) => waiters.push(resolve));
}

/**
 * Waits for `work` at most `ms`: true if it settled in time (a rejection counts as settled). A stop step
 * that can wait on a peer (a consumer leaving its group mid-rebalance) must not outlast the supervisor's
 * patience, which would end the process by SIGKILL.
 */
export async function settledWithin(work: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!work) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** For tests: forget the request (the listeners stay). */
export function resetStopRequest(): void {
  requested = undefined;
}
