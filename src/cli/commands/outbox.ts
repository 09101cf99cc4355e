import { parseOptions, UsageError, type Command } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { migratePlatform } from '../../db/migrate.ts';
import { openAppender } from '../../events/open.ts';
import { createLogger } from '../../observability/log.ts';
import { OutboxRelay } from '../../outbox/outbox.ts';
import { countPending, listOutbox } from '../../outbox/store.ts';

export const outboxRelayCommand: Command = {
  words: ['outbox', 'relay'],
  usage: 'outbox relay',
  summary:
    'publish every outbox event Kafka has not acknowledged yet, in order per key with its original id, then exit',
  async run(args, io) {
    const { positionals } = parseOptions(args, { values: [] });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const logger = createLogger({ level: config.LOG_LEVEL, name: 'outbox' });
    await migratePlatform(config.DATABASE_URL);
    const pool = createPool(config.DATABASE_URL, { max: 2, applicationName: 'swap-ledger-outbox' });
    try {
      const appender = await openAppender(config, 'outbox', logger);
      try {
        const relay = new OutboxRelay({
          pool,
          appender,
          topic: config.EVENTS_TOPIC,
          logger,
          batchSize: config.OUTBOX_RELAY_BATCH,
        });
        const published = await relay.drain();
        const left = await countPending(pool, config.EVENTS_TOPIC);
        io.stdout(`published ${published} event(s); ${left} still pending`);
        return left === 0 ? 0 : 1;
      } finally {
        await appender.stop();
      }
    } finally {
      await pool.end();
    }
  },
};

export const outboxListCommand: Command = {
  words: ['outbox', 'list'],
  usage: 'outbox list [--all] [--topic <name>] [--limit <n>] [--json]',
  summary:
    'list outbox events not yet published (oldest first), or with --all the latest ones, published or not',
  async run(args, io) {
    const { values, flags, positionals } = parseOptions(args, {
      values: ['limit', 'topic'],
      flags: ['all', 'json'],
    });
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a whole number > 0');
    const config = loadConfig(process.env, ['DATABASE_URL']);
    await migratePlatform(config.DATABASE_URL);
    const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'swap-ledger-outbox' });
    try {
      const rows = await listOutbox(pool, {
        all: flags.all === true,
        limit,
        ...(values.topic !== undefined ? { topic: values.topic } : {}),
      });
      if (flags.json) {
        for (const r of rows) io.stdout(JSON.stringify(r));
        return 0;
      }
      if (rows.length === 0) io.stdout(flags.all ? 'the outbox is empty' : 'nothing pending');
      for (const r of rows)
        io.stdout(
          `${r.seq}\t${r.publishedAt ? `published ${r.publishedAt}` : 'pending'}\t${r.topic}\t${r.eventType}\t${r.aggregateKey}\t${r.eventId}\t${r.createdAt}\t${r.reason}`,
        );
      return 0;
    } finally {
      await pool.end();
    }
  },
};
