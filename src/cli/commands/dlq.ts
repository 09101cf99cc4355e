import { readFileSync } from 'node:fs';
import type { Command } from '../command.ts';
import { parseOptions, UsageError } from '../command.ts';
import { loadConfig, type Config } from '../../config/config.ts';
import { createPool } from '../../db/client.ts';
import {
  deadLetterDiscardedEvent,
  deadLetterRetriedEvent,
  OperatorInputError,
} from '../../ops/operator-events.ts';
import { appendOperatorEvent, asUsage } from '../operator.ts';

const needs = ['DATABASE_URL', 'KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL'] as const;

async function openDeadLetter(config: Config, id: string) {
  const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
  try {
    const r = await pool.query<{ dead_letter_id: string; aggregate_key: string; status: string }>(
      'select dead_letter_id, aggregate_key, status from dead_letters where dead_letter_id = $1',
      [id],
    );
    const dl = r.rows[0];
    if (!dl) throw new OperatorInputError(`no dead letter ${id}; see swap-ledger dlq list`);
    if (dl.status !== 'open') throw new OperatorInputError(`dead letter ${id} is already ${dl.status}`);
    return { deadLetterId: dl.dead_letter_id, aggregateKey: dl.aggregate_key };
  } finally {
    await pool.end();
  }
}

export const dlqListCommand: Command = {
  words: ['dlq', 'list'],
  usage: 'dlq list [--all] [--json]',
  summary: 'list dead letters (open ones unless --all) with their reason, origin and held events',
  async run(args, io) {
    const { flags } = parseOptions(args, { values: [], flags: ['all', 'json'] });
    const config = loadConfig(process.env, ['DATABASE_URL']);
    const pool = createPool(config.DATABASE_URL, { searchPath: config.PROJECTION_SCHEMA, max: 1 });
    try {
      const r = await pool.query(
        `select d.dead_letter_id, d.aggregate_key, d.status, d.reason, d.failed_at, d.resolved_by, d.resolution,
           (select count(*)::int from event_journal j where j.aggregate_key = d.aggregate_key and j.outcome = 'parked') as held
         from dead_letters d where $1 or d.status = 'open' order by d.failed_at, d.dead_letter_id`,
        [flags.all === true],
      );
      if (flags.json) io.stdout(JSON.stringify(r.rows, null, 2));
      else if (r.rows.length === 0) io.stdout(flags.all ? 'no dead letters' : 'no open dead letters');
      else
        for (const d of r.rows) {
          io.stdout(
            `${d.dead_letter_id}  key ${d.aggregate_key}  ${d.status}  held ${d.held}  ${d.failed_at}`,
          );
          io.stdout(`    ${d.reason}${d.resolved_by ? `  [${d.resolved_by}: ${d.resolution}]` : ''}`);
        }
      return 0;
    } finally {
      await pool.end();
    }
  },
};

export const dlqRetryCommand: Command = {
  words: ['dlq', 'retry'],
  usage: 'dlq retry <id> --by <operator> [--reason <text>] [--event-file <repaired event JSON>]',
  summary:
    'after a fix: apply the dead letter (decoded again, or the repaired event), then the events held behind it',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['by', 'reason', 'event-file'] });
    if (positionals.length !== 1) throw new UsageError('name one dead letter id');
    const config = loadConfig(process.env, [...needs]);
    const replacement = values['event-file'] ? readFileSync(values['event-file'], 'utf8') : undefined;
    const dl = await asUsage(() => openDeadLetter(config, positionals[0]!));
    const event = await asUsage(() =>
      deadLetterRetriedEvent(dl, {
        by: values.by,
        ...(values.reason ? { reason: values.reason } : {}),
        ...(replacement ? { replacementEventJson: replacement } : {}),
      }),
    );
    await appendOperatorEvent(config, event);
    io.stdout(
      `retry of ${dl.deadLetterId} appended as event ${event.eventId}; the projector applies it in order`,
    );
    return 0;
  },
};

export const dlqDiscardCommand: Command = {
  words: ['dlq', 'discard'],
  usage: 'dlq discard <id> --reason <text> --by <operator>',
  summary: 'give a dead letter up (audited); the events held behind it are applied',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { values: ['by', 'reason'] });
    if (positionals.length !== 1) throw new UsageError('name one dead letter id');
    const config = loadConfig(process.env, [...needs]);
    const dl = await asUsage(() => openDeadLetter(config, positionals[0]!));
    const event = await asUsage(() => deadLetterDiscardedEvent(dl, { by: values.by, reason: values.reason }));
    await appendOperatorEvent(config, event);
    io.stdout(`discard of ${dl.deadLetterId} appended as event ${event.eventId}`);
    return 0;
  },
};
