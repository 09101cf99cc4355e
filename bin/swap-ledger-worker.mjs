#!/usr/bin/env node
// One worker of `swap-ledger up` (e.g. `projector run`): loads only that command's modules, so the
// seven workers start in about half the time `bin/swap-ledger.mjs` would take to load every command.
// A SIGTERM from the first line (before even tsx loads) (`up` stopping while this worker still loads) is noted, not Node's
// default death (143); src/lifecycle/stop.ts takes it over and the worker stops cleanly once started.
let early;
const note = (signal) => (early ??= signal);
process.on('SIGTERM', note);
process.on('SIGINT', note);
const { register } = await import('tsx/esm/api');
register();
const { installStopSignal, PROCESS_STOP_DEADLINE_MS } = await import('../src/lifecycle/stop.ts');
// `up` kills a worker still running 15 s after its SIGTERM: a stuck stop ends itself first.
installStopSignal(early, { exitAfterMs: PROCESS_STOP_DEADLINE_MS });
process.off('SIGTERM', note);
process.off('SIGINT', note);
const { runWorker } = await import('../src/cli/worker.ts');
process.exitCode = await runWorker(process.argv.slice(2));
// The worker has stopped what it started; a handle a client library left open (a socket of a consumer that
// left its group without the goodbye) must not keep the process past `up`'s patience.
setTimeout(() => process.exit(), 2000).unref();
