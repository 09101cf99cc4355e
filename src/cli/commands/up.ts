import { parseOptions, UsageError, financeSchemaOption, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { platformUp } from '../../supervisor/up.ts';
import { ProvidersFileError } from '../../providers/file.ts';

export const upCommand: Command = {
  words: ['up'],
  usage:
    'up [--no-demo] [--finance-schema <name>] [--demo-dir <dir>] [--ready-timeout <seconds>] [--replicas <n>]',
  summary:
    'migrate, create the topics and run every worker (projector, reconciler, webhook, gateway, poller, console) supervised, until Ctrl-C; without PROVIDERS_FILE also a demo partner and swaps. --replicas N (1-8) runs N instances of each worker but the console and the demo (names poller-1, poller-2…): the webhook and the gateway on N consecutive ports from WEBHOOK_PORT and GATEWAY_PORT (free ports when 0; a load balancer spreads requests over them, the demo uses the first), metrics ports METRICS_PORT + i*N + r',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['finance-schema', 'demo-dir', 'ready-timeout', 'replicas'],
      flags: ['no-demo'],
    });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const financeSchema = financeSchemaOption(values['finance-schema']);
    const readyTimeout = values['ready-timeout'] ?? '60';
    if (!/^\d{1,4}$/.test(readyTimeout) || Number(readyTimeout) < 1)
      throw new UsageError(`--ready-timeout must be whole seconds from 1 (got "${readyTimeout}")`);
    const replicas = values.replicas ?? '1';
    if (!/^[1-8]$/.test(replicas))
      throw new UsageError(`--replicas must be a whole number from 1 to 8 (got "${replicas}")`);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const write = (line: string) => process.stdout.write(line + '\n');
    let up;
    try {
      up = await platformUp(config, {
        demo: !flags['no-demo'] && config.PROVIDERS_FILE === '',
        financeSchema,
        demoDir: values['demo-dir'] ?? '.stack/demo',
        write,
        readyTimeoutMs: Number(readyTimeout) * 1000,
        replicas: Number(replicas),
      });
    } catch (e) {
      if (!(e instanceof ProvidersFileError)) throw e;
      io.stderr(e.message);
      return 2;
    }
    const { supervisor } = up;
    const stop = () => void supervisor.stop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const code = await supervisor.done;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    return code;
  },
};
