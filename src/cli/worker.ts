import { processIo, UsageError, type CliIo, type Command } from './command.ts';
import { ConfigError } from '../config/config.ts';
import { TopicReplicationError } from '../events/topics.ts';
import { installStopSignal, stopRequested } from '../lifecycle/stop.ts';
import { InputRefusedError } from '../lifecycle/refusal.ts';

/** The commands `up` runs as workers, each loaded on its own (bin/swap-ledger-worker.mjs). */
const WORKERS: Record<string, () => Promise<Command>> = {
  'projector run': () => import('./commands/projector.ts').then((m) => m.projectorRunCommand),
  'reconciler run': () => import('./commands/reconcile.ts').then((m) => m.reconcilerRunCommand),
  'webhook serve': () => import('./commands/webhook.ts').then((m) => m.webhookServeCommand),
  'gateway serve': () => import('./commands/gateway.ts').then((m) => m.gatewayServeCommand),
  'poller run': () => import('./commands/poller.ts').then((m) => m.pollerRunCommand),
  'chain watch': () => import('./commands/chain.ts').then((m) => m.chainWatchCommand),
  'console serve': () => import('./commands/console.ts').then((m) => m.consoleServeCommand),
  'demo run': () => import('./commands/demo.ts').then((m) => m.demoRunCommand),
  'demo chain': () => import('./commands/demo.ts').then((m) => m.demoChainCommand),
};

export const WORKER_COMMANDS = Object.keys(WORKERS);

/** Exit codes as `swap-ledger` gives them: 0 ok, 1 failure, 2 usage or configuration (not worth a restart). */
export async function runWorker(argv: string[], io: CliIo = processIo): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const load = WORKERS[name];
  if (!load) {
    io.stderr(`swap-ledger worker: "${name}" is not a worker command (${WORKER_COMMANDS.join(', ')})`);
    return 2;
  }
  // `up` holds an IPC channel to each worker: if `up` dies without stopping it (SIGKILL), the channel
  // closes and the worker stops cleanly instead of running on as an orphan.
  installStopSignal();
  const orphaned = () => process.emit('SIGTERM', 'SIGTERM');
  if (process.send) process.once('disconnect', orphaned);
  const command = await load();
  try {
    return await command.run(argv.slice(2), io);
  } catch (e) {
    // A refusal of what was given (usage, configuration, a setup file, an operator's input): exit 2.
    if (e instanceof InputRefusedError) {
      if (e instanceof UsageError)
        io.stderr(`swap-ledger ${name}: ${e.message}; usage: swap-ledger ${command.usage}`);
      else if (e instanceof ConfigError) io.stderr(e.message);
      else io.stderr(`swap-ledger ${name}: ${e.message}`);
      return 2;
    }
    io.stderr(`swap-ledger ${name}: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
    // Asked to stop while it was starting: the start's failure is said, the stop is clean.
    return stopRequested() ? 0 : 1;
  } finally {
    // An open channel would keep the finished worker alive.
    process.off('disconnect', orphaned);
    if (process.connected) process.disconnect();
  }
}
