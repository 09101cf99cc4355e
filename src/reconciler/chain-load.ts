import type pg from 'pg';
import type { ChainSources } from '../chain/config.ts';
import type { ChainRole, ChainTransfer } from '../events/types.ts';
import { formatSwapRef, type SwapRef } from '../swap/ref.ts';
import { perSwapLookup } from './per-swap-lookup.ts';
import type { ChainClaim, ChainEvidence, ChainObservation } from './types.ts';

/**
 * The chain evidence of a round of swaps, in two queries whatever their number (like the worker's lookups):
 * the latest observation of each reported transaction (chain_observations, folded from
 * ChainTransactionObserved), the swap's claims on transfers with who holds each (chain_claims: the earliest
 * claim by event id) and how many swaps claim the transaction, and the currencies the configuration gives a
 * chain source, so a currency with none is UNVERIFIABLE "no chain source for <currency>" rather than silently
 * passed. Every swap of `refs` gets its evidence, empty when nothing was observed (its checks then await the
 * chain). With no chain source configured at all (no CHAIN_SOURCES_FILE) the map is empty: no swap gets chain
 * checks, so a deployment that does not watch chains judges exactly as before.
 */
export async function loadChainEvidence(
  db: pg.Pool | pg.PoolClient,
  refs: readonly SwapRef[],
  sources: ChainSources,
): Promise<Map<string, ChainEvidence>> {
  if (sources.currencies.size === 0) return new Map();
  const sourced = [...sources.currencies.keys()];
  const memos = [...sources.currencies.values()].filter((c) => c.memo).map((c) => c.currency);
  const observationsOf = new Map<string, ChainObservation[]>();
  const claimsOf = new Map<string, ChainClaim[]>();
  for (const ref of refs) {
    observationsOf.set(formatSwapRef(ref), []);
    claimsOf.set(formatSwapRef(ref), []);
  }
  if (refs.length > 0) {
    const keys = [refs.map((r) => r.providerId), refs.map((r) => r.swapId)];
    const rows = await db.query<{
      provider_id: string;
      swap_id: string;
      role: ChainRole; // chain_observations_role_chk / chain_claims_role_chk hold it
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
      block_time: string | null;
      fee: string | null;
      contract_call: boolean;
    }>(
      `${perSwapLookup(
        `x.provider_id, x.swap_id, x.role, x.txid, x.event_id, x.currency, x.chain, x.family, x.status,
         x.confirmations, x.required_confirmations, x.block::text as block, x.asset, x.decimals,
         x.transfers, x.source, x.proven, x.deadline_passed,
         to_char(x.observed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as observed_at,
         x.detail, to_char(x.block_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as block_time,
         x.fee::text as fee, x.contract_call`,
        'chain_observations',
      )}
        order by t.provider_id, t.swap_id, t.observed_at, t.role, t.txid`,
      keys,
    );
    for (const r of rows.rows)
      observationsOf.get(formatSwapRef({ providerId: r.provider_id, swapId: r.swap_id }))?.push({
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
        blockTime: r.block_time,
        fee: r.fee,
        contractCall: r.contract_call,
      });
    // Each claim of the swaps with the earliest claim of its transfer (the holder) and the transaction's claimants.
    const claims = await db.query<{
      provider_id: string;
      swap_id: string;
      role: ChainRole;
      txid: string;
      transfer: string;
      holder_provider: string;
      holder_swap: string;
      holder_role: string;
      claimants: number;
    }>(
      `select c.provider_id, c.swap_id, c.role, c.txid, c.transfer, h.provider_id as holder_provider,
              h.swap_id as holder_swap, h.role as holder_role, n.claimants
         from (${perSwapLookup('x.provider_id, x.swap_id, x.chain, x.txid, x.transfer, x.role', 'chain_claims')}) c
         cross join lateral (select provider_id, swap_id, role from chain_claims h
                              where h.chain = c.chain and h.txid = c.txid and h.transfer = c.transfer
                              order by h.event_id, h.provider_id, h.swap_id, h.role limit 1) h
         cross join lateral (select count(distinct (provider_id, swap_id, role))::int as claimants
                               from chain_claims n where n.chain = c.chain and n.txid = c.txid) n
        order by c.provider_id, c.swap_id, c.role, c.txid, c.transfer`,
      keys,
    );
    for (const r of claims.rows) {
      const own =
        r.holder_provider === r.provider_id && r.holder_swap === r.swap_id && r.holder_role === r.role;
      claimsOf.get(formatSwapRef({ providerId: r.provider_id, swapId: r.swap_id }))?.push({
        role: r.role,
        txid: r.txid,
        transfer: r.transfer,
        heldBy: own
          ? null
          : `${formatSwapRef({ providerId: r.holder_provider, swapId: r.holder_swap })} (${r.holder_role})`,
        claimants: r.claimants,
      });
    }
  }
  const evidence = new Map<string, ChainEvidence>();
  for (const [k, observations] of observationsOf)
    evidence.set(k, { sourced, memos, observations, claims: claimsOf.get(k) ?? [] });
  return evidence;
}
