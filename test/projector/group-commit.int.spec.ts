import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projectBatch, projectBatches, type BatchItem } from '../../src/projector/batch.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { freshProjectionAtStart } from '../support/context.ts';

const TOPIC = 'group-commit';

function run(partition: number, events: SwapEvent[], from = 0n): BatchItem[] {
  return events.map((event, i) => ({
    position: { topic: TOPIC, partition, offset: from + BigInt(i) },
    event,
  }));
}

/** Two partitions' runs, as a fetch brings them under a steady load. */
function twoRuns(prefix: string) {
  return {
    p0: run(0, [swapCreated(`${prefix}-a`), statusReported(`${prefix}-a`, 'PENDING')]),
    p1: run(1, [
      swapCreated(`${prefix}-b`),
      statusReported(`${prefix}-b`, 'ON_HOLD'),
      statusReported(`${prefix}-b`, 'FINISHED', {
        amount: '0.25',
        payinTransactionId: 'in',
        payoutTransactionId: 'out',
      }),
    ]),
  };
}

describe('group commit: several partitions folded in one transaction (real Postgres)', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));

  /** A fresh projection whose checkpoints of partitions 0 and 1 stand at 0 (as the projector reads them first). */
  async function projection(label: string) {
    const p = await freshProjectionAtStart(label, TOPIC, [0, 1]);
    pools.push(p.pool);
    return p;
  }

  /** Each partition's stored next offset. */
  async function checkpointsOf(pool: pg.Pool): Promise<Record<number, number>> {
    const r = await pool.query<{ partition: number; n: number }>(
      'select partition, next_offset::int as n from projector_checkpoints order by partition',
    );
    return Object.fromEntries(r.rows.map((row) => [row.partition, row.n]));
  }

  async function withClient<T>(pool: pg.Pool, f: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await pool.connect();
    try {
      return await f(c);
    } finally {
      c.release();
    }
  }

  it('gives the state each partition folded alone gives, and moves every checkpoint', async () => {
    const together = await projection('gc_together');
    const alone = await projection('gc_alone');
    const { p0, p1 } = twoRuns('gc');
    const results = await withClient(together.pool, (c) =>
      projectBatches(c, TOPIC, [
        { partition: 1, expectedNextOffset: 0n, items: p1 },
        { partition: 0, expectedNextOffset: 0n, items: p0 },
      ]),
    );
    // Each result is its own run's, in the order given.
    expect(
      results.map((r) => r.ok && [r.nextOffset, r.journal.map((j) => j.partition), r.duplicates]),
    ).toEqual([
      [3n, [1, 1, 1], 0],
      [2n, [0, 0], 0],
    ]);
    await withClient(alone.pool, async (c) => {
      expect((await projectBatch(c, TOPIC, 0, 0n, p0)).ok).toBe(true);
      expect((await projectBatch(c, TOPIC, 1, 0n, p1)).ok).toBe(true);
    });
    const [a, b] = await Promise.all([
      withClient(together.pool, (c) => stateChecksum(c, together.schema)),
      withClient(alone.pool, (c) => stateChecksum(c, alone.schema)),
    ]);
    expect(a.checksum).toBe(b.checksum);
    const swaps = await together.pool.query('select swap_id, status from swaps order by swap_id');
    expect(swaps.rows).toEqual([
      { swap_id: 'gc-a', status: 'PENDING' },
      { swap_id: 'gc-b', status: 'FINISHED' },
    ]);
    expect(await checkpointsOf(together.pool)).toEqual({ 0: 2, 1: 3 });
  });

  it('a run whose checkpoint another member moved is refused with where it stands; the others apply', async () => {
    const { pool } = await projection('gc_moved');
    const { p0, p1 } = twoRuns('gm');
    await pool.query(`update projector_checkpoints set next_offset = 5 where topic = $1 and partition = 1`, [
      TOPIC,
    ]);
    const results = await withClient(pool, (c) =>
      projectBatches(c, TOPIC, [
        { partition: 0, expectedNextOffset: 0n, items: p0 },
        { partition: 1, expectedNextOffset: 0n, items: p1 },
      ]),
    );
    expect(results[0]).toMatchObject({ ok: true, nextOffset: 2n });
    expect(results[1]).toEqual({ ok: false, storedNextOffset: 5n });
    const swaps = await pool.query('select swap_id from swaps order by swap_id');
    expect(swaps.rows).toEqual([{ swap_id: 'gm-a' }]);
    expect((await pool.query(`select 1 from event_journal where swap_id = 'gm-b'`)).rowCount).toBe(0);
  });

  it('an event the database refuses is journaled as rejected in its run; every other event applies', async () => {
    const { pool } = await projection('gc_refused');
    // createdAt is not a time: the fold takes it as text, Postgres refuses it (22007) in swaps.created_at.
    const bad = swapCreated('gr-bad', { created: { createdAt: 'yesterday at noon' } });
    const p0 = run(0, [bad, swapCreated('gr-a')]);
    const { p1 } = twoRuns('gr');
    const results = await withClient(pool, (c) =>
      projectBatches(c, TOPIC, [
        { partition: 0, expectedNextOffset: 0n, items: p0 },
        { partition: 1, expectedNextOffset: 0n, items: p1 },
      ]),
    );
    const [r0, r1] = results;
    if (!r0?.ok || !r1?.ok)
      throw new Error(
        `both runs should apply: ${JSON.stringify(results, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );
    expect(r0.refusedByDatabase).toMatchObject([
      {
        eventId: bad.eventId,
        reason: expect.stringMatching(/^the database refused the event's effects: 22007/),
      },
    ]);
    expect(r0.journal.map((j) => j.outcome)).toEqual(['rejected', 'applied']);
    expect(r1.refusedByDatabase).toEqual([]);
    const swaps = await pool.query('select swap_id, status from swaps order by swap_id');
    expect(swaps.rows.map((r) => r.swap_id)).toEqual(['gr-a', 'gr-b']);
    expect(await checkpointsOf(pool)).toEqual({ 0: 2, 1: 3 });
  });

  it('refuses two runs of one partition, writing nothing', async () => {
    const { pool } = await projection('gc_twice');
    const { p0 } = twoRuns('gt');
    await expect(
      withClient(pool, (c) =>
        projectBatches(c, TOPIC, [
          { partition: 0, expectedNextOffset: 0n, items: p0.slice(0, 1) },
          { partition: 0, expectedNextOffset: 1n, items: p0.slice(1) },
        ]),
      ),
    ).rejects.toThrow(/one run per partition/);
    expect((await pool.query('select 1 from event_journal')).rowCount).toBe(0);
  });
});
