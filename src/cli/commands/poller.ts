import { parseOptions, UsageError, runUntilSignal, startOrRefuse, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { startPoller } from '../../poller/run.ts';
import { ProvidersFileError } from '../../providers/file.ts';

export const pollerRunCommand: Command = {
  words: ['poller', 'run'],
  usage: 'poller run',
  summary:
    'poll GET /status of every swap not final (POLL_CRON) and sync the catalogs (CATALOG_SYNC_CRON), until SIGTERM',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'poller' });
    const running = await startOrRefuse(io, [ProvidersFileError], () => startPoller(config, logger));
    if (!running) return 2;
    logger.info({ pollCron: config.POLL_CRON, catalogCron: config.CATALOG_SYNC_CRON }, 'poller running');
    return runUntilSignal(running, logger, 'poller');
  },
};
