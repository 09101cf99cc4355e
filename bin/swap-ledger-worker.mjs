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
const { installStopSignal } = await import('../src/lifecycle/stop.ts');
installStopSignal(early);
process.off('SIGTERM', note);
process.off('SIGINT', note);
const { runWorker } = await import('../src/cli/worker.ts');
process.exitCode = await runWorker(process.argv.slice(2));
