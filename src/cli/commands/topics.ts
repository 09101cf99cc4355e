import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createConfiguredTopics } from '../../events/open.ts';

export const topicsCreateCommand: Command = {
  words: ['topics', 'create'],
  usage: 'topics create [--partitions <n>] [--replication-factor <n>] [--min-insync-replicas <n>]',
  summary:
    'create the events and dead-letter topics, replicated (idempotent; an existing topic is reported, not changed; exit 1 when one is less replicated than configured)',
  async run(args, io) {
    const { values } = parseOptions(args, {
      values: ['partitions', 'replication-factor', 'min-insync-replicas'],
    });
    const config = loadConfig(process.env, ['KAFKA_BROKERS']);
    const partitions = values.partitions === undefined ? config.TOPIC_PARTITIONS : Number(values.partitions);
    if (!Number.isInteger(partitions) || partitions < 1)
      throw new UsageError('--partitions must be a whole number >= 1');
    const count = (flag: 'replication-factor' | 'min-insync-replicas', configured: number) => {
      const v = values[flag] === undefined ? configured : Number(values[flag]);
      if (!Number.isInteger(v) || v < 0 || v > 16)
        throw new UsageError(`--${flag} must be a whole number 0-16`);
      return v;
    };
    const replicationFactor = count('replication-factor', config.TOPIC_REPLICATION_FACTOR);
    const minInsyncReplicas = count('min-insync-replicas', config.TOPIC_MIN_INSYNC_REPLICAS);
    const { report, warning } = await createConfiguredTopics({
      ...config,
      TOPIC_PARTITIONS: partitions,
      TOPIC_REPLICATION_FACTOR: replicationFactor,
      TOPIC_MIN_INSYNC_REPLICAS: minInsyncReplicas,
    });
    if (warning) io.stderr(`warning: ${warning}`);
    let short = 0;
    for (const t of report) {
      io.stdout(
        `${t.created ? 'created' : 'exists '}  ${t.topic}  (${t.partitions} partitions)  replication factor ${t.replicationFactor}, min.insync.replicas ${t.minInsyncReplicas}`,
      );
      if (!t.created && t.topic === config.EVENTS_TOPIC && t.partitions !== partitions) {
        io.stderr(`note: ${t.topic} has ${t.partitions} partitions, not ${partitions}; left as it is`);
      }
      if (t.problems.length > 0) {
        short++;
        io.stderr(
          `error: ${t.topic} is less replicated than configured (${t.problems.join(', ')}); left as it is, and no writer starts on it`,
        );
      }
    }
    return short > 0 ? 1 : 0;
  },
};
