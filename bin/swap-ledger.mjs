#!/usr/bin/env node
// Runs the TypeScript sources through tsx so the CLI never drifts from a stale build.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// A replay folds the whole log with memory bounded by its batches, but V8 grows its heap with the run's
// length unless given a budget (measured: 378 MiB peak at 100k events, 494 MiB at 200k): the rebuild runs
// again in a child under a fixed one, REPLAY_HEAP_MB (checked like every setting by the command itself).
const argv = process.argv.slice(2);
// The long-running commands: a SIGTERM while one is still starting stops it cleanly (0), not by signal (143).
const SERVING = [
  'projector run',
  'reconciler run',
  'webhook serve',
  'gateway serve',
  'poller run',
  'console serve',
  'demo run',
];
const rebuilds = argv[0] === 'replay' && !['list', 'drop', 'promote'].includes(argv[1] ?? '');
const budget = process.env.REPLAY_HEAP_MB ?? '320';
if (rebuilds && /^\d+$/.test(budget) && !process.execArgv.some((a) => a.startsWith('--max-old-space-size'))) {
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${budget}`, ...process.execArgv, fileURLToPath(import.meta.url), ...argv],
    { stdio: 'inherit' },
  );
  child.on('error', (e) => {
    console.error(`swap-ledger replay could not start under its heap budget: ${e.message}`);
    process.exit(1);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await run();
}

async function run() {
  let early;
  const note = (signal) => (early ??= signal);
  const serving = SERVING.includes(argv.slice(0, 2).join(' '));
  if (serving) for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, note);
  register();
  if (serving) {
    const { installStopSignal, PROCESS_STOP_DEADLINE_MS } = await import('../src/lifecycle/stop.ts');
    // `up` kills a worker still running 15 s after its SIGTERM: a stuck stop ends itself first.
    installStopSignal(early, { exitAfterMs: PROCESS_STOP_DEADLINE_MS });
    for (const signal of ['SIGTERM', 'SIGINT']) process.off(signal, note);
  }
  // A closed pipe (`swap-ledger ... | head`) ends the output, not the process with a stack trace.
  process.stdout.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
  // A serving command has stopped what it started; a handle a client library left open (a socket of a
  // consumer that left its group without the goodbye) must not keep the process past `up`'s patience.
  if (serving) setTimeout(() => process.exit(), 2000).unref();
}
