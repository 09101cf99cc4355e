import type { Command } from '../command.ts';
import { parseOptions } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { kafkaHealth, postgresHealth, registryHealth } from '../../ops/health.ts';

export const healthCommand: Command = {
  words: ['health'],
  usage: 'health [--json]',
  summary: 'report whether Kafka, the schema registry and Postgres answer (exit 1 if one does not)',
  async run(args, io) {
    const { flags } = parseOptions(args, { values: [], flags: ['json'] });
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const report = await Promise.all([
      kafkaHealth(config.KAFKA_BROKERS),
      registryHealth(config.SCHEMA_REGISTRY_URL),
      postgresHealth(config.DATABASE_URL),
    ]);
    if (flags.json) io.stdout(JSON.stringify(report, null, 2));
    else
      for (const c of report)
        io.stdout(`${c.healthy ? 'healthy' : 'DOWN   '}  ${c.component.padEnd(16)} ${c.detail}`);
    return report.every((c) => c.healthy) ? 0 : 1;
  },
};
