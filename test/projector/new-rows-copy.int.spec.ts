import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { projectBatch, type BatchItem } from '../../src/projector/batch.ts';
import { stateChecksum } from '../../src/projector/checksum.ts';
import { lifecycleScenario } from '../../src/testing/scenarios.ts';
import { freshProjectionAtStart } from '../support/context.ts';
import { recordingQueries } from '../support/recording.ts';

const TOPIC = 'new-rows';

/**
 * A batch with many new rows (keys its load did not find) inserts them by COPY and upserts only the stored
 * ones (src/projector/batch.ts, upsertWrites). The state must be the one the upserts alone give, and a key
 * taken for new that exists must fail the batch, never be overwritten or lost.
 */
describe('new rows of a large batch go in by COPY (real Postgres)', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => Promise.all(pools.map((p) => p.end())));

  // 300 swaps' events over two batches: the second finds the first's swaps stored and brings new ones.
  const events = lifecycleScenario(300, 5).slice(0, 1500);
  const positioned = (from: number, to: number): BatchItem[] =>
    events
      .slice(from, to)
      .map((event, i) => ({ position: { topic: TOPIC, partition: 0, offset: BigInt(from + i) }, event }));

  async function fold(
    label: string,
    size: number,
    midBatch?: (client: pg.PoolClient) => Promise<void>,
  ): Promise<{ checksum: string; queries: string[]; savepoints: number }> {
    const p = await freshProjectionAtStart(label, TOPIC);
    pools.push(p.pool);
    const client = await p.pool.connect();
    const { queries, restore } = recordingQueries(client);
    try {
      for (let at = 0; at < events.length; at += size) {
        const r = await projectBatch(client, TOPIC, 0, BigInt(at), positioned(at, at + size), {
          midBatch: midBatch && (() => midBatch(client)),
        });
        expect(r.ok).toBe(true);
      }
      return {
        checksum: (await stateChecksum(client, p.schema)).checksum,
        queries,
        savepoints: queries.filter((q) => q.startsWith('savepoint')).length,
      };
    } finally {
      restore();
      client.release();
    }
  }

  const copiesInto = (queries: string[], table: string) =>
    queries.filter((q) => q.startsWith(`copy "${table}"`)).length;

  it('copies the new swaps, requests and queue rows, and leaves the state the upserts leave', async () => {
    const byCopy = await fold('new_rows_copy', 750);
    // Ten events a batch: every table's new rows stay under the threshold, so all go by upsert.
    const byUpsert = await fold('new_rows_upsert', 10);
    for (const table of ['swaps', 'swap_requests', 'reconciliation_queue']) {
      expect(copiesInto(byCopy.queries, table), table).toBeGreaterThan(0);
      expect(copiesInto(byUpsert.queries, table), table).toBe(0);
    }
    expect(copiesInto(byCopy.queries, 'swaps')).toBe(2); // both batches bring 100 new swaps or more
    expect(byCopy.savepoints).toBe(0);
    expect(byCopy.checksum).toBe(byUpsert.checksum);
  });

  it('fails the batch on a key taken for new that exists, then folds it event by event to the same state', async () => {
    const clean = await fold('new_rows_clean', 750);
    let batches = 0;
    let planted = 0;
    // Between the load and the writes, a row appears under the key of a swap the batch creates: its COPY
    // must refuse it (23505). The failed transaction takes the planted row with it; the redo loads afresh.
    const raced = await fold('new_rows_raced', 750, async (client) => {
      if (batches++ > 0) return;
      const created = events.find((e) => e.eventType === 'SwapCreated')!;
      await client.query(
        `insert into swaps (provider_id, swap_id, request_id, trade_method, currency_from, currency_to,
           payload_currency_from, payload_currency_to, payin_address, payout_address, refund_address, nonce,
           created_at, signature_valid, status, version, last_event_id, updated_at)
         values ($1, $2, 'planted', 'float', 'BTC', 'ETH', 'BTC', 'ETH', 'in', 'out', 'back', 'n', now(),
           false, 'CREATED', 1, $3, now())`,
        [created.providerId, created.swapId, created.eventId],
      );
      planted++;
    });
    expect(planted).toBe(1);
    expect(raced.savepoints).toBe(750); // the first batch, redone event by event
    expect(raced.checksum).toBe(clean.checksum);
  });
});
