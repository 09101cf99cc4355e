import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projectBatch, type BatchItem } from '../../src/projector/batch.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { freshProjectionAtStart } from '../support/context.ts';
import { recordingQueries } from '../support/recording.ts';

const TOPIC = 'streamed';

/**
 * The live path streams a batch's journal to Postgres while the batch folds (src/projector/batch.ts). A
 * fold that fails after some journal rows have gone out must leave none of them: the batch is done again
 * event by event, and each event is journaled once, as a batch that never failed would have.
 */
describe('a batch whose fold fails after its journal began to stream (real Postgres)', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));

  // 1,200 events: the fold sends its journal every 500, so rows are in Postgres before the failure at 900.
  const events = lifecycleScenario(260, 7).slice(0, 1200);
  const FAILS_AT = 900;

  async function foldOnce(label: string, items: BatchItem[]) {
    const p = await freshProjectionAtStart(label, TOPIC);
    pools.push(p.pool);
    const client = await p.pool.connect();
    const { queries, restore } = recordingQueries(client);
    try {
      const result = await projectBatch(client, TOPIC, 0, 0n, items);
      const journal = await client.query<{ n: number; d: number }>(
        'select count(*)::int as n, count(distinct event_id)::int as d from event_journal',
      );
      return {
        result,
        journal: journal.rows[0]!,
        checksum: (await stateChecksum(client, p.schema)).checksum,
        savepoints: queries.filter((q) => q.startsWith('savepoint')).length,
      };
    } finally {
      restore();
      client.release();
    }
  }

  const positioned = (): BatchItem[] =>
    events.map((event, i) => ({ position: { topic: TOPIC, partition: 0, offset: BigInt(i) }, event }));

  it('leaves none of the streamed rows: the batch is redone, each event journaled once, the same state', async () => {
    expect(events).toHaveLength(1200);
    const clean = await foldOnce('streamed_clean', positioned());
    expect(clean.result.ok).toBe(true);
    expect(clean.savepoints).toBe(0);

    // The item's trace context is read by the fold loop alone (after its event folded and its journal
    // row was streamed), never by the load before it: its first read throws, as a fold bug would.
    const items = positioned();
    let thrown = 0;
    const failing = items[FAILS_AT] as { traceParent?: string | null };
    Object.defineProperty(failing, 'traceParent', {
      get() {
        if (thrown++ === 0) throw new Error('the fold failed halfway through the batch');
        return null;
      },
    });
    const redone = await foldOnce('streamed_failed', items);

    expect(thrown).toBeGreaterThan(1); // failed once, then read again by the event-by-event pass
    expect(redone.savepoints).toBe(events.length);
    expect(redone.result.ok).toBe(true);
    if (!redone.result.ok) return;
    expect(redone.result.refusedByDatabase).toEqual([]);
    // The scenario resends some events: each distinct one is journaled once, as in the clean fold.
    if (!clean.result.ok) return;
    expect(redone.result.journal).toHaveLength(clean.result.journal.length);
    expect(redone.result.duplicates).toBe(clean.result.duplicates);
    expect(clean.journal).toEqual({ n: clean.result.journal.length, d: clean.result.journal.length });
    expect(redone.journal).toEqual(clean.journal);
    expect(redone.checksum).toBe(clean.checksum);
  });
});
