import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type pg from 'pg';
import { createPool } from '../../src/db/client.ts';
import { createLogger } from '../../src/observability/log.ts';
import { startProjector, type RunningProjector } from '../../src/projector/run.ts';
import { projectBatch, readCheckpoint } from '../../src/projector/batch.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import { valueSubject } from '../../src/events/codec.ts';
import { createKafka } from '../../src/events/kafka.ts';
import { replay } from '../../src/ops/replay.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { statusReported, swapCorrected, swapCreated } from '../../src/testing/events.ts';
import { migrateProjection } from '../../src/db/migrate.ts';
import { testStack, uniqueName } from '../support/context.ts';
import {
  checksumOf,
  freshEventLog,
  projectionConfig,
  spawnProjector,
  waitForProjection,
} from '../support/event-log.ts';

describe('projector (real Kafka, registry and Postgres)', () => {
  const stack = testStack();
  const logger = createLogger({ level: 'warn', name: 'projector-test' });
  let log: Awaited<ReturnType<typeof freshEventLog>>;
  let events: SwapEvent[];
  let reference: { schema: string; pool: pg.Pool; running: RunningProjector; checksum: string };
  const pools: pg.Pool[] = [];

  async function projection(label: string) {
    const schema = uniqueName(label, '_');
    await migrateProjection(stack.databaseUrl, schema);
    const pool = createPool(stack.databaseUrl, { searchPath: schema });
    pools.push(pool);
    return { schema, pool };
  }

  beforeAll(async () => {
    log = await freshEventLog(12);
    events = lifecycleScenario(300, 7);
    await log.append(events);
    const { schema, pool } = await projection('reference');
    const running = await startProjector(projectionConfig(log, schema), logger);
    await waitForProjection(pool, log.topic);
    reference = { schema, pool, running, checksum: (await checksumOf(pool, schema)).checksum };
  });

  afterAll(async () => {
    await reference?.running.stop();
    await log?.close();
    for (const p of pools) await p.end();
  });

  it('journals every distinct event once, and ignores redeliveries of an event id', async () => {
    const distinct = new Set(events.map((e) => e.eventId)).size;
    expect(distinct).toBeLessThan(events.length); // the scenario does redeliver
    const r = await reference.pool.query(
      'select count(*)::int as n, count(distinct event_id)::int as d from event_journal',
    );
    expect(r.rows[0]).toEqual({ n: distinct, d: distinct });
    const outcomes = await reference.pool.query(
      'select outcome, count(*)::int as n from event_journal group by outcome order by outcome',
    );
    // The scenario has applied changes and no-ops (a poll repeating a webhook, an open status delivered
    // after the final one: out of date).
    expect(outcomes.rows.map((r: { outcome: string }) => r.outcome)).toEqual(['applied', 'noop']);
  });

  it('checksums every column: changing one amount changes the checksum', async () => {
    const client = await reference.pool.connect();
    try {
      await client.query('begin');
      expect((await stateChecksum(client, reference.schema)).checksum).toBe(reference.checksum);
      const r = await client.query(
        `update swaps set amount_from = amount_from + 0.000000000000000001
         where swap_id = (select swap_id from swaps where not final order by swap_id limit 1)`,
      );
      expect(r.rowCount).toBe(1);
      const changed = await stateChecksum(client, reference.schema);
      expect(changed.checksum).not.toBe(reference.checksum);
      expect(changed.tables.event_journal).toEqual(
        (await checksumOf(reference.pool, reference.schema)).tables.event_journal,
      );
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  it("checksums an amount's scale: 1.5 is not 1.50, though equal as numbers", async () => {
    const before = await checksumOf(reference.pool, reference.schema);
    const client = await reference.pool.connect();
    try {
      await client.query('begin');
      // The ledger refuses any UPDATE (its guard trigger): off for this transaction only, rolled back.
      await client.query('alter table ledger_postings disable trigger user');
      const r = await client.query(
        `update ledger_postings p set amount = x.rescaled
           from (select posting_id, (amount::text || case when amount::text like '%.%' then '0' else '.0' end)::numeric
                        as rescaled from ledger_postings order by posting_id limit 1) x
          where p.posting_id = x.posting_id and x.rescaled = p.amount
          returning p.amount::text as amount`,
      );
      expect(r.rowCount).toBe(1);
      expect(r.rows[0].amount).toMatch(/0$/);
      const rescaled = await stateChecksum(client, reference.schema);
      expect(rescaled.checksum).not.toBe(before.checksum);
      expect(rescaled.tables.ledger_postings!.rows).toBe(before.tables.ledger_postings!.rows);
      expect(rescaled.tables.ledger_postings!.digest).not.toBe(before.tables.ledger_postings!.digest);
      expect(rescaled.tables.swaps).toEqual(before.tables.swaps);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  it("leaves the queue's trace context out of the checksum: state is the same whatever the headers", async () => {
    const client = await reference.pool.connect();
    try {
      await client.query('begin');
      const stamped = await client.query(
        `update reconciliation_queue set trace_parent = '00-' || md5(swap_id) || '-' || left(md5(provider_id), 16) || '-01'`,
      );
      expect(stamped.rowCount).toBeGreaterThan(0); // the scenario's final swaps await a verdict
      expect((await stateChecksum(client, reference.schema)).checksum).toBe(reference.checksum);
      // Every other column of the queue still counts.
      await client.query(`update reconciliation_queue set reason = reason || '!'`);
      expect((await stateChecksum(client, reference.schema)).checksum).not.toBe(reference.checksum);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  for (const crashAt of ['mid-batch', 'before-commit'] as const) {
    it(`SIGKILL ${crashAt}, then a restart: the same state as a clean run`, async () => {
      const { schema, pool } = await projection(`crash_${crashAt.replace('-', '_')}`);
      const group = uniqueName(`crash-${crashAt}`);
      const crashing = spawnProjector({
        topic: log.topic,
        schema,
        group,
        maxBatch: 40,
        env: { PROJECTOR_CRASH_AT: crashAt, PROJECTOR_CRASH_AFTER: '4' },
      });
      expect(await crashing.exited, crashing.output()).toBeNull(); // killed by the signal
      const folded = await pool.query(
        'select coalesce(sum(next_offset), 0)::int as n from projector_checkpoints',
      );
      expect(folded.rows[0].n).toBeLessThan(events.length); // it died before the end

      const restarted = spawnProjector({ topic: log.topic, schema, group, maxBatch: 40 });
      try {
        await waitForProjection(pool, log.topic);
        expect((await checksumOf(pool, schema)).checksum).toBe(reference.checksum);
      } finally {
        restarted.kill('SIGTERM');
        expect(await restarted.exited, restarted.output()).toBe(0);
      }
    });
  }

  it('two members share 12 partitions; one is killed mid-run; the survivor finishes with the same state', async () => {
    const { schema, pool } = await projection('two_members');
    const group = uniqueName('two-members');
    // The victim starts first and has committed work when the survivor joins: two members at once could
    // let the survivor take every partition and fold the log before the victim reaches its sixth batch.
    const victim = spawnProjector({
      topic: log.topic,
      schema,
      group,
      maxBatch: 25,
      env: { PROJECTOR_CRASH_AT: 'mid-batch', PROJECTOR_CRASH_AFTER: '6' },
    });
    let survivor: ReturnType<typeof spawnProjector> | undefined;
    try {
      for (let waited = 0; !/batch committed/.test(victim.output()); waited += 100) {
        if (waited > 30_000) throw new Error(`the victim committed nothing in 30 s: ${victim.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      survivor = spawnProjector({ topic: log.topic, schema, group, maxBatch: 25 });
      expect(await victim.exited, victim.output()).toBeNull();
      expect(victim.output()).toMatch(/batch committed/); // it did work before it died
      await waitForProjection(pool, log.topic);
      expect((await checksumOf(pool, schema)).checksum).toBe(reference.checksum);
    } finally {
      victim.kill('SIGKILL'); // a no-op once it crashed as planned; never left running by a failure
      survivor?.kill('SIGTERM');
      await survivor?.exited;
    }
  });

  it("refuses a stale member's checkpoint write and writes nothing", async () => {
    const client = await reference.pool.connect();
    try {
      const stored = await readCheckpoint(client, log.topic, 0);
      expect(stored).toBeGreaterThan(0n);
      const before = await checksumOf(reference.pool, reference.schema);
      const stale = statusReported('swap-7-0', 'PENDING');
      const result = await projectBatch(client, log.topic, 0, stored - 1n, [
        { position: { topic: log.topic, partition: 0, offset: stored - 1n }, event: stale },
      ]);
      expect(result).toEqual({ ok: false, storedNextOffset: stored });
      expect((await checksumOf(reference.pool, reference.schema)).checksum).toBe(before.checksum);
    } finally {
      client.release();
    }
  });

  describe('final-status rules on the live projection', () => {
    const swapId = `rules-${Date.now()}`;
    const created = swapCreated(swapId);
    const finished = statusReported(swapId, 'FINISHED', { amount: '0.25', payoutTransactionId: 'out' });
    const stale = statusReported(swapId, 'PENDING'); // an earlier state delivered late: ignored
    const later = statusReported(swapId, 'REFUNDED'); // another outcome: a recorded contradiction

    beforeAll(async () => {
      await log.append([
        created,
        statusReported(swapId, 'PENDING'),
        statusReported(swapId, 'ON_HOLD'),
        statusReported(swapId, 'PENDING'),
        finished,
        stale,
        later,
        created, // a duplicate delivery of the creation
      ]);
      await waitForProjection(reference.pool, log.topic);
    });

    it('applies PENDING → ON_HOLD → PENDING → FINISHED as four changes; the later report is a recorded contradiction', async () => {
      const journal = await reference.pool.query(
        `select event_type, outcome, reason, changes->'status' as status from event_journal
         where swap_id = $1 order by "offset"`,
        [swapId],
      );
      expect(journal.rows.map((r: { status: unknown; outcome: string }) => [r.outcome, r.status])).toEqual([
        ['applied', [null, 'CREATED']],
        ['applied', ['CREATED', 'PENDING']],
        ['applied', ['PENDING', 'ON_HOLD']],
        ['applied', ['ON_HOLD', 'PENDING']],
        ['applied', ['PENDING', 'FINISHED']],
        ['noop', null],
        ['contradicted', ['FINISHED', 'REFUNDED']],
      ]);
      expect(journal.rows[5].reason).toBe(
        'an open status (PENDING) after the final status FINISHED: out of date, ignored',
      );
      expect(journal.rows[6].reason).toContain(
        'contradicts final swap (FINISHED): status FINISHED → REFUNDED',
      );
      const conflicts = await reference.pool.query(
        'select field, final_value, reported_value from status_conflicts where swap_id = $1',
        [swapId],
      );
      expect(conflicts.rows).toEqual([
        { field: 'status', final_value: 'FINISHED', reported_value: 'REFUNDED' },
      ]);
      const swap = await reference.pool.query(
        'select status, final, amount_to, version from swaps where swap_id = $1',
        [swapId],
      );
      expect(swap.rows[0]).toEqual({ status: 'FINISHED', final: true, amount_to: '0.25', version: 5 });
      const queued = await reference.pool.query(
        'select queued_by_event_id from reconciliation_queue where swap_id = $1',
        [swapId],
      );
      // The contradiction reopened the reconciliation: the queue entry is based on it now.
      expect(queued.rows).toEqual([{ queued_by_event_id: later.eventId }]);
    });

    it('refuses a direct SQL UPDATE of a final swap, and a forged correction', async () => {
      await expect(
        reference.pool.query(`update swaps set amount_to = '1' where swap_id = $1`, [swapId]),
      ).rejects.toThrow(/is final \(FINISHED\)/);
      await expect(
        reference.pool.query(`update swaps set status = 'PENDING' where swap_id = $1`, [swapId]),
      ).rejects.toThrow(/only through an applied SwapCorrected/);
      await expect(
        reference.pool.query(
          `update swaps set amount_to = '1', last_correction_event_id = $2 where swap_id = $1`,
          [swapId, later.eventId],
        ),
      ).rejects.toThrow(/is final/);
      await expect(reference.pool.query(`delete from swaps where swap_id = $1`, [swapId])).rejects.toThrow(
        /cannot be deleted/,
      );
      // Filling a value still unknown is allowed (the confirming poll does it through the fold).
      const fill = await reference.pool.query(`select provider_fees from swaps where swap_id = $1`, [swapId]);
      expect(fill.rows[0].provider_fees).toBeNull();
    });

    it('leaves a swap that is not final free to change and go (the guard runs for final rows only)', async () => {
      const client = await reference.pool.connect();
      try {
        await client.query('begin');
        // The final swap's row, copied as an open one of another id (rolled back below).
        await client.query(
          `create temp table open_swap on commit drop as select * from swaps where swap_id = $1`,
          [swapId],
        );
        await client.query(
          `update open_swap set swap_id = swap_id || '-open', status = 'PENDING', status_class = 'open',
             final = false, final_at = null`,
        );
        await client.query(`insert into swaps select * from open_swap`);
        const open = `${swapId}-open`;
        const amended = await client.query(
          `update swaps set amount_to = '1', status = 'FINISHED' where swap_id = $1`,
          [open],
        );
        expect(amended.rowCount).toBe(1);
        expect((await client.query(`delete from swaps where swap_id = $1`, [open])).rowCount).toBe(1);
      } finally {
        await client.query('rollback');
        client.release();
      }
    });

    it('lets an applied SwapCorrected amend the final swap, through the database', async () => {
      const fix = swapCorrected(swapId, { amount: '0.26', operator: 'alice', reason: 'statement 7' });
      await log.append([fix]);
      await waitForProjection(reference.pool, log.topic);
      const swap = await reference.pool.query(
        'select amount_to, corrected, last_correction_event_id from swaps where swap_id = $1',
        [swapId],
      );
      expect(swap.rows[0]).toEqual({
        amount_to: '0.26',
        corrected: true,
        last_correction_event_id: fix.eventId,
      });
      const j = await reference.pool.query(
        'select outcome, reason, changes from event_journal where event_id = $1',
        [fix.eventId],
      );
      expect(j.rows[0]).toEqual({
        outcome: 'applied',
        reason: 'corrected by alice: statement 7',
        changes: { amountTo: ['0.25', '0.26'] },
      });
    });
  });

  it('has the registry refuse an incompatible change of the event schema', async () => {
    const registry = new SchemaRegistry({ host: stack.registryUrl });
    const incompatible = structuredClone(log.codec.schema) as { fields: Record<string, unknown>[] };
    incompatible.fields.push({ name: 'mandatoryWithoutDefault', type: 'string' });
    await expect(
      registry.register(
        { type: SchemaType.AVRO, schema: JSON.stringify(incompatible) },
        { subject: valueSubject(log.topic) },
      ),
    ).rejects.toThrow(/Incompatible|409/i);
    // A compatible evolution (a new field with a default) is accepted.
    const compatible = structuredClone(log.codec.schema) as { fields: Record<string, unknown>[] };
    compatible.fields.push({ name: 'traceId', type: ['null', 'string'], default: null });
    const { id } = await registry.register(
      { type: SchemaType.AVRO, schema: JSON.stringify(compatible) },
      { subject: valueSubject(log.topic) },
    );
    expect(id).toBeGreaterThan(0);
  });

  it('replay from offset 0 rebuilds exactly the state every scenario above left', async () => {
    await waitForProjection(reference.pool, log.topic);
    const result = await replay({
      databaseUrl: stack.databaseUrl,
      kafka: createKafka({ brokers: stack.kafkaBrokers.split(','), clientId: 'test-replay' }),
      codec: log.codec,
      topic: log.topic,
      liveSchema: reference.schema,
      logger,
    });
    expect(result.rebuilt.checksum).toBe((await checksumOf(reference.pool, reference.schema)).checksum);
    expect(result.equal).toBe(true);
  });
});
