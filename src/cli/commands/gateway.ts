import { parseOptions, UsageError, runUntilSignal, startOrRefuse, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { GatewayConfigError, startGateway } from '../../gateway/run.ts';
import { createLogger } from '../../observability/log.ts';
import { ProvidersFileError } from '../../providers/file.ts';

export const gatewayServeCommand: Command = {
  words: ['gateway', 'serve'],
  usage: 'gateway serve [--host <addr>] [--port <n>]',
  summary:
    'serve the wallet API (/v1/quotes, /v1/swaps, catalog) on GATEWAY_HOST:GATEWAY_PORT and relay the outbox, until SIGTERM',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['host', 'port'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const env = { ...process.env };
    if (values.host !== undefined) env.GATEWAY_HOST = values.host;
    if (values.port !== undefined) env.GATEWAY_PORT = values.port;
    const config = loadConfig(env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
    const running = await startOrRefuse(io, [ProvidersFileError, GatewayConfigError], () =>
      startGateway(config, logger),
    );
    if (!running) return 2;
    logger.info({ url: running.url, topic: config.EVENTS_TOPIC }, 'gateway listening');
    return runUntilSignal(running, logger, 'gateway');
  },
};
