import type pg from 'pg';
import type { ChainSources } from '../chain/config.ts';
import type { ChainTransfer } from '../events/types.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import type { ChainEvidence, ChainObservation } from './types.ts';

/**
 * The chain evidence of a round of swaps, in one query whatever their number (like the worker's lookups):
 * the latest observation of each reported transaction (chain_observations, folded from
 * ChainTransactionObserved) and the currencies the configuration gives a chain source, so a currency with
 * none is UNVERIFIABLE "no chain source for <currency>" rather than silently passed. Every swap of `refs`
 * gets its evidence, empty when nothing was observed (its checks then await the chain). With no chain source
 * configured at all (no CHAIN_SOURCES_FILE) the map is empty: no swap gets chain checks, so a deployment that
 * does not watch chains judges exactly as before.
 */
export async function loadChainEvidence(
  db: pg.Pool | pg.PoolClient,
  refs: readonly SwapRef[],
  sources: ChainSources,
): Promise<Map<string, ChainEvidence>> {
  if (sources.currencies.size === 0) return new Map();
  const sourced = [...sources.currencies.keys()];
  const memos = [...sources.currencies.values()].filter((c) => c.memo).map((c) => c.currency);
  const byRef = new Map<string, ChainObservation[]>();
  for (const ref of refs) byRef.set(formatSwapRef(ref), []);
  if (refs.length > 0) {
    const rows = await db.query<{
      provider_id: string;
      swap_id: string;
      role: string;
      txid: string;
      event_id: string;
      currency: string;
      chain: string;
      family: string;
      status: string;
      confirmations: number;
      required_confirmations: number;
      block: string | null;
      asset: string;
      decimals: number;
      transfers: ChainTransfer[];
      source: string;
      proven: boolean;
      deadline_passed: boolean;
      observed_at: string;
      detail: string | null;
    }>(
      `select x.provider_id, x.swap_id, x.role, x.txid, x.event_id, x.currency, x.chain, x.family, x.status,
              x.confirmations, x.required_confirmations, x.block::text as block, x.asset, x.decimals,
              x.transfers, x.source, x.proven, x.deadline_passed,
              to_char(x.observed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as observed_at,
              x.detail
         from unnest($1::text[], $2::text[]) as k(provider_id, swap_id)
         cross join lateral (select * from chain_observations c
                             where c.provider_id = k.provider_id and c.swap_id = k.swap_id offset 0) x
        order by x.provider_id, x.swap_id, x.observed_at, x.role, x.txid`,
      [refs.map((r) => r.providerId), refs.map((r) => r.swapId)],
    );
    for (const r of rows.rows)
      byRef.get(formatSwapRef({ providerId: r.provider_id, swapId: r.swap_id }))?.push({
        role: r.role,
        txid: r.txid,
        eventId: r.event_id,
        currency: r.currency,
        chain: r.chain,
        family: r.family,
        status: r.status,
        confirmations: r.confirmations,
        requiredConfirmations: r.required_confirmations,
        block: r.block === null ? null : Number(r.block),
        asset: r.asset,
        decimals: r.decimals,
        transfers: r.transfers,
        source: r.source,
        proven: r.proven,
        deadlinePassed: r.deadline_passed,
        observedAt: r.observed_at,
        detail: r.detail,
      });
  }
  const evidence = new Map<string, ChainEvidence>();
  for (const [k, observations] of byRef) evidence.set(k, { sourced, memos, observations });
  return evidence;
}
