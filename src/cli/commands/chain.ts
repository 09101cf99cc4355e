import { parseOptions, UsageError, runUntilSignal, startOrRefuse, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { ChainSourcesFileError } from '../../chain/config.ts';
import { startChainWatcher } from '../../chainwatch/run.ts';

export const chainWatchCommand: Command = {
  words: ['chain', 'watch'],
  usage: 'chain watch [--once]',
  summary:
    'look up every reported payin, payout and refund transaction on its chain (CHAIN_SOURCES_FILE) and append what it saw, until SIGTERM; --once: one round, then exit',
  async run(args, io) {
    const { positionals, flags } = parseOptions(args, { values: [], flags: ['once'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'chain-watch' });
    const once = flags.once === true;
    const running = await startOrRefuse(io, [ChainSourcesFileError], () =>
      startChainWatcher(config, logger, { schedule: !once }),
    );
    if (!running) return 2;
    if (once) {
      try {
        const r = await running.round();
        io.stdout(
          `watched ${r.watched}, looked up ${r.looked}, appended ${r.appended} observation(s), ${r.failed} lookup(s) failed`,
        );
        return r.failed > 0 ? 1 : 0;
      } finally {
        await running.stop();
      }
    }
    return runUntilSignal(running, logger, 'chain-watch');
  },
};
