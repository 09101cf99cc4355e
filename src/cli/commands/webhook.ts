import { parseOptions, UsageError, runUntilSignal, startOrRefuse, type Command } from '../command.ts';
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
    const running = await startOrRefuse(io, [ProvidersFileError], () => startWebhook(config, logger));
    if (!running) return 2;
    logger.info({ url: running.url, topic: config.EVENTS_TOPIC }, 'webhook server listening');
    return runUntilSignal(running, logger, 'webhook server');
  },
};
