import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { replay } from '../../src/ops/replay.ts';
import { testKafka, testStack, freshProjection } from '../support/context.ts';
import { freshEventLog, projectionConfig, waitForProjection } from '../support/event-log.ts';

/**
 * Issue 13, "nothing stops the log", on the real stack: events injected straight into the topic (Avro,
 * through the registry, as any producer could write them) that a partner or an old log could bring. Each
 * is journaled as rejected with its reason, and the partition's next events are applied: the projector's
 * position reaches the end of the topic.
 */
describe('the log never stops (real Kafka, registry and Postgres)', () => {
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let projection: { schema: string; pool: pg.Pool };
  let projector: RunningProjector;
  const HUGE = '1'.repeat(81); // 81 significant digits: more than decimal.js keeps, more than 40 integer digits
  const inOnePartition = 1; // one partition: every event below is a neighbour of every other

  beforeAll(async () => {
    log = await freshEventLog(inOnePartition);
    projection = await freshProjection('never_halts');
    projector = await startProjector(
      projectionConfig(log, projection.schema),
      createLogger({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await projector?.stop();
    await projection?.pool.end();
    await log?.close();
  });

  async function journalOf(swapId: string) {
    return (
      await projection.pool.query(
        `select event_type, outcome, reason from event_journal where swap_id = $1 order by "offset"`,
        [swapId],
      )
    ).rows;
  }

  async function positionAtEnd(): Promise<void> {
    await waitForProjection(projection.pool, log.topic);
    const admin = testKafka('never-halts').admin();
    await admin.connect();
    try {
      const [end] = await admin.fetchTopicOffsets(log.topic);
      const cp = await projection.pool.query(
        'select next_offset from projector_checkpoints where topic = $1',
        [log.topic],
      );
      expect(cp.rows[0].next_offset).toBe(end!.high);
    } finally {
      await admin.disconnect();
    }
  }

  it('an amount of more than 80 digits is rejected by the fold; the FINISHED after it applies', async () => {
    await log.append([
      swapCreated('nh-huge'),
      statusReported('nh-huge', 'FINISHED', {
        amount: HUGE,
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      }),
      statusReported('nh-huge', 'FINISHED', {
        amount: '0.25',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      }),
    ]);
    await positionAtEnd();
    const j = await journalOf('nh-huge');
    expect(j.map((r) => r.outcome)).toEqual(['applied', 'rejected', 'applied']);
    expect(j[1].reason).toMatch(/amount "1{60}…" is not a non-negative decimal of at most 40 integer/);
    const postings = await projection.pool.query(
      `select currency, sum(amount)::text as total from ledger_postings where swap_id = 'nh-huge' group by currency`,
    );
    expect(postings.rows.length).toBeGreaterThan(0);
    for (const r of postings.rows) expect(r.total).toMatch(/^0(\.0+)?$/); // balanced
  });

  it.each([
    ['payinTransactionId', { payinTransactionId: 'in\u0000x' }],
    ['payoutTransactionId', { payoutTransactionId: 'out\u0000x' }],
    ['refundTransactionId', { refundTransactionId: 'r\u0000' }],
    ['providerStatus', { providerStatus: 'FIN\u0000ISHED' }],
  ])(
    'a NUL in %s is rejected with the reason, stored without the NUL; the partition goes on',
    async (field, fields) => {
      const id = `nh-nul-${field}`;
      await log.append([
        swapCreated(id),
        statusReported(id, 'PENDING', fields),
        statusReported(id, 'PENDING', { payinTransactionId: 'clean' }),
      ]);
      await positionAtEnd();
      const j = await journalOf(id);
      expect(j.map((r) => r.outcome)).toEqual(['applied', 'rejected', 'applied']);
      expect(j[1].reason).toContain(`${field} contains U+0000`);
      const stored = await projection.pool.query(
        `select payload::text as p from event_journal where swap_id = $1 and outcome = 'rejected'`,
        [id],
      );
      expect(stored.rows[0].p).not.toContain('\\u0000');
    },
  );

  it('a NUL in a SwapCreated address or the swapId itself is rejected; other swaps go on', async () => {
    await log.append([
      swapCreated('nh-addr', { created: { payinAddress: 'bc1q\u0000' } }),
      swapCreated('nh-\u0000id'),
      swapCreated('nh-after'),
      statusReported('nh-after', 'PENDING'),
    ]);
    await positionAtEnd();
    expect((await journalOf('nh-addr')).map((r) => r.outcome)).toEqual(['rejected']);
    expect((await journalOf('nh-after')).map((r) => r.outcome)).toEqual(['applied', 'applied']);
    const bad = await projection.pool.query(`select reason from event_journal where swap_id = 'nh-\ufffdid'`);
    expect(bad.rows[0].reason).toMatch(/swapId contains U\+0000/);
  });

  it('an event the fold admits but the database refuses is journaled as rejected with the database reason', async () => {
    // createdAt is not a time: the fold takes it as text, Postgres refuses it (22007) in swaps.created_at.
    await log.append([
      swapCreated('nh-db', { created: { createdAt: 'yesterday at noon' } }),
      swapCreated('nh-db-next'),
      statusReported('nh-db-next', 'FINISHED', {
        amount: '0.25',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      }),
    ]);
    await positionAtEnd();
    const j = await journalOf('nh-db');
    expect(j).toEqual([
      {
        event_type: 'SwapCreated',
        outcome: 'rejected',
        reason: expect.stringMatching(/^the database refused the event's effects: 22007 .*yesterday at noon/),
      },
    ]);
    expect((await journalOf('nh-db-next')).map((r) => r.outcome)).toEqual(['applied', 'applied']);
    const swap = await projection.pool.query(`select status from swaps where swap_id = 'nh-db-next'`);
    expect(swap.rows[0].status).toBe('FINISHED');
    expect((await projection.pool.query(`select 1 from swaps where swap_id = 'nh-db'`)).rowCount).toBe(0);
  });

  it('a replay refuses the same events at the same points and rebuilds the same state (EQUAL)', async () => {
    await positionAtEnd();
    const result = await replay({
      databaseUrl: testStack().databaseUrl,
      kafka: testKafka('never-halts-replay'),
      codec: log.codec,
      topic: log.topic,
      liveSchema: projection.schema,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      expect(result.equal).toBe(true);
    } finally {
      await projection.pool.query(`drop schema if exists ${result.schema} cascade`);
    }
  });
});
