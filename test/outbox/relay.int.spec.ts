import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/client.ts';
import { migratePlatform } from '../../src/db/migrate.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { createLogger } from '../../src/observability/log.ts';
import { OutboxRelay, outboxKeyFlusher } from '../../src/outbox/outbox.ts';
import { insertOutbox } from '../../src/outbox/store.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { endOffsets } from '../ingest/webhook-support.ts';
import { runCli } from '../support/cli.ts';
import { freshProjection, testStack, uniqueName } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * The relay on real Postgres locks and a real topic: several relays and key flushes at once publish
 * every row exactly once, in order per key, with its original id (the projector rejects a report that
 * arrives before its swap's SwapCreated, so any disorder shows in the journal).
 */
describe('outbox relay', () => {
  const stack = testStack();
  const quiet = createLogger({ level: 'fatal', name: 'relay-test' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: Awaited<ReturnType<typeof freshProjection>>;
  let projector: RunningProjector;
  let pool: pg.Pool;

  beforeAll(async () => {
    await migratePlatform(stack.databaseUrl);
    [log, projection] = await Promise.all([freshEventLog(3), freshProjection('relay')]);
    projector = await startProjector(projectionConfig(log, projection.schema), quiet);
    pool = createPool(stack.databaseUrl, { max: 8 });
  }, 120_000);

  afterAll(async () => {
    await projector?.stop();
    await log?.close();
    await projection?.pool.end();
    await pool?.end();
  });

  /** Per swap: SwapCreated, PENDING, ON_HOLD, PENDING; interleaved across swaps as a busy gateway would write them. */
  function history(swaps: number, providerId: string): SwapEvent[][] {
    return Array.from({ length: swaps }, (_, i) => {
      const id = uniqueName(`relay-${i}`);
      return [
        swapCreated(id, { providerId }),
        statusReported(id, 'PENDING', {}, { providerId }),
        statusReported(id, 'ON_HOLD', {}, { providerId }),
        statusReported(id, 'PENDING', {}, { providerId }),
      ];
    });
  }

  async function fill(perSwap: SwapEvent[][]): Promise<void> {
    for (let step = 0; step < 4; step++)
      for (const events of perSwap) await insertOutbox(pool, log.topic, [events[step]!], 'test');
  }

  it('several relays and flushes at once: every row once, in order per key, original ids', async () => {
    const providerId = uniqueName('relay-p');
    const perSwap = history(20, providerId);
    await fill(perSwap);
    // A row of another topic is never touched by this topic's relays.
    const foreign = swapCreated(uniqueName('foreign'), { providerId });
    await insertOutbox(pool, `${log.topic}.other`, [foreign], 'test');

    const relays = [1, 2, 3].map(
      () => new OutboxRelay({ pool, appender: log.appender, topic: log.topic, logger: quiet, batchSize: 7 }),
    );
    const flush = outboxKeyFlusher({ pool, appender: log.appender, topic: log.topic });
    await Promise.all([
      ...relays.map((r) => r.drain()),
      ...perSwap.filter((_, i) => i % 3 === 0).map((events) => flush(events[0]!.aggregateKey)),
    ]);
    // A relay may stop while another still held rows: one more round picks up what is left.
    await relays[0]!.drain();

    const rows = await pool.query<{ topic: string; published: boolean; n: number }>(
      `select topic, published_at is not null as published, count(*)::int as n from platform.outbox
       where topic like $1 group by 1, 2 order by 1`,
      [`${log.topic}%`],
    );
    expect(rows.rows).toEqual([
      { topic: log.topic, published: true, n: 80 },
      { topic: `${log.topic}.other`, published: false, n: 1 },
    ]);
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(80n); // each exactly once
    // Tracing is off here: no trace context was kept with the rows.
    const traced = await pool.query(
      `select 1 from platform.outbox where topic = $1 and (trace_parent is not null or trace_state is not null)`,
      [log.topic],
    );
    expect(traced.rowCount).toBe(0);

    await waitForProjection(projection.pool, log.topic);
    const journal = await projection.pool.query<{ event_id: string; outcome: string }>(
      `select event_id, outcome, reason, event_type, aggregate_key, "offset"::text from event_journal where provider_id = $1 order by aggregate_key, "offset"`,
      [providerId],
    );
    expect(journal.rows).toHaveLength(80);
    expect(journal.rows.filter((r) => r.outcome !== 'applied')).toEqual([]);
    expect(new Set(journal.rows.map((r) => r.event_id))).toEqual(
      new Set(perSwap.flat().map((e) => e.eventId)),
    );
  });

  it('`outbox relay` publishes what is pending and says what is left; `outbox list` shows it', async () => {
    const providerId = uniqueName('relay-cli');
    const perSwap = history(2, providerId);
    await fill(perSwap);
    const env = {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      EVENTS_TOPIC: log.topic,
    };
    const listed = await runCli(['outbox', 'list', '--topic', log.topic, '--json'], env);
    expect(listed.code).toBe(0);
    const pending = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { eventId: string; seq: string });
    expect(pending.map((p) => p.eventId)).toEqual(
      [0, 1, 2, 3].flatMap((step) => perSwap.map((e) => e[step]!.eventId)),
    );

    const before = await endOffsets(stack.kafkaBrokers, log.topic);
    const relayed = await runCli(['outbox', 'relay'], env);
    expect(relayed.stdout).toContain('published 8 event(s); 0 still pending');
    expect(relayed.code).toBe(0);
    expect(await endOffsets(stack.kafkaBrokers, log.topic)).toBe(before + 8n);
    await waitForProjection(projection.pool, log.topic);
    const swaps = await projection.pool.query(`select status from swaps where provider_id = $1`, [
      providerId,
    ]);
    expect(swaps.rows).toEqual([{ status: 'PENDING' }, { status: 'PENDING' }]);
  });
});
