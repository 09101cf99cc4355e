import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { perSwapLookup } from '../../src/reconciler/per-swap-lookup.ts';
import { freshProjection } from '../support/context.ts';

/** Every plan node of an EXPLAIN (FORMAT JSON), depth first. */
function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/**
 * The reconciler reads a round's swaps (500 by default) key by key. Planned as an ordinary join, the
 * planner hashed the whole swaps table for a round (25-30 ms of Postgres a round in the reconciler bench,
 * against ~3 ms probing the index), and scanned a never-analyzed journal once per key.
 */
describe('the reconciler reads a round of swaps by one index probe each (real Postgres)', () => {
  const SWAPS = 20_000;
  const ROUND = 500;
  let pool: pg.Pool;
  let keys: [string[], string[]];

  beforeAll(async () => {
    ({ pool } = await freshProjection('lookups'));
    await pool.query(
      `insert into swaps (swap_id, provider_id, request_id, trade_method, currency_from, currency_to,
                          payload_currency_from, payload_currency_to, payin_address, payout_address,
                          refund_address, nonce, created_at, signature_valid, status, version, last_event_id,
                          updated_at)
       select 'swap-' || i, 'partner', 'request-' || i, 'fixed', 'BTC', 'ETH', 'BTC', 'ETH', 'in', 'out',
              'back', 'nonce', now(), true, 'FINISHED', 1, gen_random_uuid(), now()
       from generate_series(1, $1) as i`,
      [SWAPS],
    );
    // Two journal rows a swap, as the lookup's filter sees them: its creation and a status report.
    await pool.query(
      `insert into event_journal (event_id, topic, partition, "offset", event_type, swap_id, aggregate_key,
                                  provider_id, source, occurred_at, recorded_at, outcome, payload)
       select gen_random_uuid(), 'events', 0, i * 2 + t, case t when 0 then 'SwapCreated' else 'StatusReported' end,
              'swap-' || i, 'swap:partner:swap-' || i, 'partner', 'test', now(), now(), 'applied', '{}'::jsonb
       from generate_series(1, $1) as i cross join generate_series(0, 1) as t`,
      [SWAPS],
    );
    await pool.query('analyze');
    const picked = Array.from({ length: ROUND }, (_, i) => `swap-${1 + i * 37}`);
    keys = [picked.map(() => 'partner'), picked];
  });

  afterAll(async () => {
    await pool?.end();
  });

  const planOf = async (sql: string) => {
    const r = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${sql}`, keys);
    return nodesOf(r.rows[0]!['QUERY PLAN'][0].Plan);
  };

  it.each([
    ['swaps', perSwapLookup('x.swap_id, x.status', 'swaps')],
    [
      'event_journal',
      perSwapLookup('x.swap_id, x.payload::text', 'event_journal', `and x.event_type = 'SwapCreated'`),
    ],
  ])('%s: an index probe per key, never a scan or a hash of the table', async (table, sql) => {
    const nodes = await planOf(sql);
    const onTable = nodes.filter((n) => n['Relation Name'] === table);
    expect(onTable.map((n) => n['Node Type'])).toEqual([expect.stringMatching(/^Index( Only)? Scan$/)]);
    expect(nodes.map((n) => n['Node Type'])).not.toContain('Hash Join');
  });

  it('finds each key once, and a key with no row nothing', async () => {
    const r = await pool.query(perSwapLookup('x.swap_id', 'swaps'), [
      ['partner', 'partner', 'elsewhere'],
      ['swap-1', 'swap-2', 'swap-1'],
    ]);
    expect(r.rows.map((row: { swap_id: string }) => row.swap_id).sort()).toEqual(['swap-1', 'swap-2']);
  });
});
