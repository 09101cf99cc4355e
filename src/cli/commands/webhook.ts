import { parseOptions, UsageError, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { ProvidersFileError } from '../../providers/file.ts';
import { startWebhook } from '../../ingest/webhook/run.ts';

export const webhookServeCommand: Command = {
  words: ['webhook', 'serve'],
  usage: 'webhook serve [--host <addr>] [--port <n>]',
  summary:
    'serve POST /webhook/:swapId/status on WEBHOOK_HOST:WEBHOOK_PORT (metrics and health on METRICS_HOST:METRICS_PORT) until SIGTERM',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['host', 'port'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const env = { ...process.env };
    if (values.host !== undefined) env.WEBHOOK_HOST = values.host;
    if (values.port !== undefined) env.WEBHOOK_PORT = values.port;
    const config = loadConfig(env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'webhook' });
    let running;
    try {
      running = await startWebhook(config, logger);
    } catch (e) {
      if (!(e instanceof ProvidersFileError)) throw e;
      io.stderr(e.message);
      return 2;
    }
    logger.info({ url: running.url, topic: config.EVENTS_TOPIC }, 'webhook server listening');
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    logger.info('stopping webhook server');
    await running.stop();
    return 0;
  },
};
