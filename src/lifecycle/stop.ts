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

function request(signal: StopSignal): void {
  requested ??= signal;
  const now = waiters;
  waiters = [];
  for (const w of now) w(requested);
}

/** Listens for SIGTERM and SIGINT from now on; `early`: a signal noted before this module was loaded. */
export function installStopSignal(early?: StopSignal): void {
  if (!installed) {
    installed = true;
    process.on('SIGTERM', () => request('SIGTERM'));
    process.on('SIGINT', () => request('SIGINT'));
  }
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

/** For tests: forget the request (the listeners stay). */
export function resetStopRequest(): void {
  requested = undefined;
}
