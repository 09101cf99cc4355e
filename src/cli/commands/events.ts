import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import { readJournaledEvent, reapplyEvent } from '../../ops/reapply.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

export const eventsReapplyCommand: Command = {
  words: ['events', 'reapply'],
  usage: 'events reapply <eventId> --operator <who> --reason <what was fixed>',
  summary:
    'after a fix: re-apply an event journaled as rejected (audited: appended as an EventReapplied that carries it, so a replay gives the same state)',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['operator', 'reason'] });
    if (positionals.length !== 1) throw new UsageError('name one rejected event id');
    const eventId = positionals[0]!;
    const config = loadConfig(process.env, ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    let event;
    try {
      const row = await asUsage(() => readJournaledEvent(pool, eventId));
      event = await asUsage(() =>
        reapplyEvent(row, { eventId, operator: values.operator, reason: values.reason }),
      );
    } finally {
      await pool.end();
    }
    await appendOperatorEvent(config, event);
    io.stdout(
      `reapply of ${event.payload.eventType} ${eventId} appended as event ${event.eventId}; the projector applies it in order (see swap-ledger swap show, or the journal)`,
    );
    return 0;
  },
};
