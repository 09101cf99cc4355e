import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createKafka, createTopics } from '../../events/index.ts';

export const topicsCreateCommand: Command = {
  words: ['topics', 'create'],
  usage: 'topics create [--partitions <n>]',
  summary:
    'create the events and dead-letter topics (idempotent; an existing topic is reported, not changed)',
  async run(args, io) {
    const { values } = parseOptions(args, { values: ['partitions'] });
    const config = loadConfig(process.env, ['KAFKA_BROKERS']);
    const partitions = values.partitions === undefined ? config.TOPIC_PARTITIONS : Number(values.partitions);
    if (!Number.isInteger(partitions) || partitions < 1)
      throw new UsageError('--partitions must be a whole number >= 1');
    const admin = createKafka({
      brokers: config.KAFKA_BROKERS,
      clientId: `${config.KAFKA_CLIENT_ID}-admin`,
    }).admin();
    await admin.connect();
    try {
      const report = await createTopics(admin, {
        eventsTopic: config.EVENTS_TOPIC,
        dlqTopic: config.DLQ_TOPIC,
        partitions,
      });
      for (const t of report) {
        io.stdout(`${t.created ? 'created' : 'exists '}  ${t.topic}  (${t.partitions} partitions)`);
        if (!t.created && t.topic === config.EVENTS_TOPIC && t.partitions !== partitions) {
          io.stderr(`note: ${t.topic} has ${t.partitions} partitions, not ${partitions}; left as it is`);
        }
      }
      return 0;
    } finally {
      await admin.disconnect();
    }
  },
};
