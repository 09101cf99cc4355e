import { parseOptions, UsageError, financeSchemaOption, runUntilSignal, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createLogger } from '../../observability/log.ts';
import { ConsoleConfigError, startConsole } from '../../console/run.ts';

export const consoleServeCommand: Command = {
  words: ['console', 'serve'],
  usage: 'console serve [--host <addr>] [--port <n>] [--finance-schema <name>]',
  summary:
    'serve the read-only ops and finance console (CONSOLE_HOST:CONSOLE_PORT, loopback by default; login key digests in CONSOLE_KEY_DIGESTS) until SIGTERM',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['host', 'port', 'finance-schema'] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const financeSchema = financeSchemaOption(values['finance-schema']);
    const env = { ...process.env };
    if (values.host !== undefined) env.CONSOLE_HOST = values.host;
    if (values.port !== undefined) env.CONSOLE_PORT = values.port;
    const config = loadConfig(env, ['DATABASE_URL', 'KAFKA_BROKERS']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'console' });
    let running;
    try {
      running = await startConsole(config, logger, { financeSchema });
    } catch (e) {
      // A taken port is a configuration problem: restarting would not free it.
      if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        io.stderr(`console: ${config.CONSOLE_HOST}:${config.CONSOLE_PORT} is in use; set CONSOLE_PORT`);
        return 2;
      }
      if (!(e instanceof ConsoleConfigError)) throw e;
      io.stderr(e.message);
      return 2;
    }
    logger.info(
      { url: running.url, schema: config.PROJECTION_SCHEMA, finance: financeSchema },
      'console listening',
    );
    return runUntilSignal(running, logger, 'console');
  },
};
