import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/observability/log.ts';
import { DurablePublisher } from '../../src/outbox/outbox.ts';
import { swapCreated } from '../../src/testing/events.ts';
import { endOffsets } from '../ingest/webhook-support.ts';
import { testStack, uniqueName } from '../support/context.ts';
import { freshEventLog } from '../support/event-log.ts';

/**
 * publishWithKept, for a fact the partner already holds: a failed outbox transaction is retried within
 * its bound, and past the bound the events go straight to Kafka. The failures are Postgres' own (a
 * statement it refuses), the log and the outbox real.
 */
describe('a created swap kept when its outbox write fails', () => {
  const stack = testStack();
  const quiet = createLogger({ level: 'fatal', name: 'kept-test' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let pool: pg.Pool;
  let publisher: DurablePublisher;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    log = await freshEventLog(1);
    pool = createPool(stack.databaseUrl, { max: 4 });
    publisher = new DurablePublisher({ pool, appender: log.appender, topic: log.topic, logger: quiet });
  }, 120_000);

  afterAll(async () => {
    await log?.close();
    await pool?.end();
  });

  const outboxRows = async (eventId: string) =>
    (await pool.query(`select 1 from platform.outbox where event_id = $1`, [eventId])).rowCount;

  it('the transaction failing twice, then not: recorded in the outbox with its row, after three attempts', async () => {
    const event = swapCreated(uniqueName('kept'), { providerId: 'kept' });
    let attempts = 0;
    const path = await publisher.publishWithKept(
      [event],
      async (client) => {
        attempts++;
        if (attempts <= 2) await client.query('select 1 / 0');
      },
      'test',
      30_000,
    );
    expect(attempts).toBe(3);
    expect(path).toBe('kafka'); // committed, then flushed to Kafka at once
    expect(await outboxRows(event.eventId)).toBe(1);
  });

  it('failing past its bound: the event goes straight to Kafka, nothing in the outbox', async () => {
    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const event = swapCreated(uniqueName('kept'), { providerId: 'kept' });
    let attempts = 0;
    const path = await publisher.publishWithKept(
      [event],
      async (client) => {
        attempts++;
        await client.query('select 1 / 0');
      },
      'test',
      600,
    );
    expect(path).toBe('kafka');
    expect(attempts).toBeGreaterThan(1);
    expect(await outboxRows(event.eventId)).toBe(0);
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 1n);
  });
});
