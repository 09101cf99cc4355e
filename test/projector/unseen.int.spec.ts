import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projectBatch, type BatchItem, type FoldOptions } from '../../src/projector/batch.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import type { SwapEvent } from '../../src/events/types.ts';
import { statusReported, swapCreated } from '../../src/testing/events.ts';
import { freshProjectionAtStart } from '../support/context.ts';
import { recordingQueries } from '../support/recording.ts';

const TOPIC = 'unseen';

/**
 * A rebuild folds with `unseen` (src/projector/batch.ts): its events' ids are not looked up in the journal.
 * An event id journaled in an earlier batch (a resend that reached the log twice) must still be ignored,
 * exactly as the live projector ignores it, or the rebuilt state would differ from the live one.
 */
describe('a rebuild takes its events as unseen, and still ignores an event id journaled before (real Postgres)', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));

  const created = swapCreated('unseen-a');
  const finished = statusReported('unseen-a', 'FINISHED', {
    amount: '0.25',
    payinTransactionId: 'in',
    payoutTransactionId: 'out',
  });
  /** The second batch resends the creation and the final status, then brings a late event. */
  const batches: SwapEvent[][] = [
    [created, statusReported('unseen-a', 'PENDING'), finished],
    [created, finished, statusReported('unseen-a', 'EXPIRED')],
  ];

  /** Folds the batches one after another; returns each batch's duplicates and the state's checksum. */
  async function fold(label: string, options: FoldOptions) {
    const p = await freshProjectionAtStart(label, TOPIC);
    pools.push(p.pool);
    const client = await p.pool.connect();
    const duplicates: number[] = [];
    const rec = recordingQueries(client);
    try {
      let next = 0n;
      for (const events of batches) {
        const items: BatchItem[] = events.map((event, i) => ({
          position: { topic: TOPIC, partition: 0, offset: next + BigInt(i) },
          event,
        }));
        const r = await projectBatch(client, TOPIC, 0, next, items, {}, undefined, options);
        if (!r.ok) throw new Error('checkpoint moved');
        duplicates.push(r.duplicates);
        next = r.nextOffset;
      }
      const journal = await client.query<{ n: number; d: number }>(
        'select count(*)::int as n, count(distinct event_id)::int as d from event_journal',
      );
      return {
        duplicates,
        journal: journal.rows[0],
        checksum: (await stateChecksum(client, p.schema)).checksum,
        savepoints: rec.queries.filter((q) => q.startsWith('savepoint')).length,
      };
    } finally {
      rec.restore();
      client.release();
    }
  }

  it('gives the state of the folds that look every id up: the resent events ignored, the late one folded', async () => {
    const looked = await fold('unseen_lookup', {});
    const unseen = await fold('unseen_rebuild', { unseen: true });
    expect(looked.duplicates).toEqual([0, 2]);
    expect(unseen.duplicates).toEqual([0, 2]);
    expect(unseen.journal).toEqual({ n: 4, d: 4 });
    expect(unseen.checksum).toBe(looked.checksum);
    // The refused batch is folded again whole, with the lookups, not one event at a time.
    expect(unseen.savepoints).toBe(0);
  });

  it('folds a batch of events never journaled at once, without looking their ids up', async () => {
    const p = await freshProjectionAtStart('unseen_lookups', TOPIC);
    pools.push(p.pool);
    const client = await p.pool.connect();
    const { queries, restore } = recordingQueries(client);
    try {
      const items: BatchItem[] = batches[0]!.map((event, i) => ({
        position: { topic: TOPIC, partition: 0, offset: BigInt(i) },
        event,
      }));
      const r = await projectBatch(client, TOPIC, 0, 0n, items, {}, undefined, { unseen: true });
      expect(r.ok).toBe(true);
      expect(queries.filter((q) => /from event_journal where event_id/.test(q))).toEqual([]);
      expect(queries.filter((q) => q === 'rollback')).toEqual([]);
    } finally {
      restore();
      client.release();
    }
  });
});
